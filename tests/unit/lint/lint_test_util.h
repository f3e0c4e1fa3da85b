// Helpers the lint tests share: findings of one rule, and their error count. (Not in a namespace
// called `testing` inside onnxdbg::lint, which would hide onnxdbg::testing from the lint tests.)
#pragma once

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <string>
#include <vector>

#include "lint/lint.h"

namespace onnxdbg::lint_testing {

/// The findings of `all` whose rule is `rule`, in order.
inline std::vector<lint::Finding> of_rule(const std::vector<lint::Finding>& all,
                                          const std::string& rule) {
  std::vector<lint::Finding> out;
  std::copy_if(all.begin(), all.end(), std::back_inserter(out),
               [&](const lint::Finding& f) { return f.rule == rule; });
  return out;
}

/// How many of `fs` are errors.
inline int64_t errors(const std::vector<lint::Finding>& fs) {
  return lint::count_findings(fs).error;
}

}  // namespace onnxdbg::lint_testing
