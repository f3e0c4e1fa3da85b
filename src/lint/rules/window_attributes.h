// What the window rules (conv_attributes, pool_attributes) share: attributes that count window
// steps (kernel_shape, strides, dilations) must be 1 or more on every spatial axis.
#pragma once

#include <initializer_list>
#include <string>

#include "lint/rule.h"

namespace onnxdbg::lint {

/// Reports, once per attribute, each of `names` on node `node` of `g` that holds a value below 1
/// ("strides [0, 0] has 0 on spatial axis 0; every value must be 1 or more."), with severity `sev`.
inline void report_windows_below_one(RuleContext& ctx, const GraphInfo& g, int64_t node,
                                     Severity sev, std::initializer_list<const char*> names) {
  for (const char* name : names) {
    const auto* a = find_attribute(g.node(node), name);
    if (!a) continue;
    for (int k = 0; k < a->ints_size(); ++k)
      if (a->ints(k) <= 0) {
        ctx.report(sev, g, node,
                   std::string(name) + " " + ints_to_string(*a) + " has " +
                       std::to_string(a->ints(k)) + " on spatial axis " + std::to_string(k) +
                       "; every value must be 1 or more.");
        break;
      }
  }
}

}  // namespace onnxdbg::lint
