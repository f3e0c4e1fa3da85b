// StringSplit: splits each string of X at `delimiter` (StringSplit-20). Y is X's shape plus one
// dim as long as the most substrings of any element, padded with ""; Z (int64, X's shape) counts
// each element's substrings. As Python's str.split: with a delimiter, consecutive delimiters give
// empty substrings; without one (absent or ""), runs of ASCII whitespace separate and leading or
// trailing whitespace gives nothing. `maxsplit` caps the splits made from the left.
#include <limits>

#include "reference/kernel_util.h"

namespace onnxdbg::reference {
namespace {

bool is_ascii_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

std::vector<std::string> split_one(const std::string& s, const std::string& delim,
                                   int64_t maxsplit) {
  std::vector<std::string> parts;
  int64_t splits = 0;
  if (delim.empty()) {
    size_t i = 0;
    while (true) {
      while (i < s.size() && is_ascii_space(s[i])) ++i;
      if (i == s.size()) break;
      if (splits == maxsplit) {  // the rest, trailing whitespace removed
        size_t end = s.size();
        while (end > i && is_ascii_space(s[end - 1])) --end;
        parts.push_back(s.substr(i, end - i));
        break;
      }
      size_t j = i;
      while (j < s.size() && !is_ascii_space(s[j])) ++j;
      parts.push_back(s.substr(i, j - i));
      ++splits;
      i = j;
    }
    return parts;
  }
  size_t start = 0;
  while (splits < maxsplit) {
    const size_t at = s.find(delim, start);
    if (at == std::string::npos) break;
    parts.push_back(s.substr(start, at - start));
    start = at + delim.size();
    ++splits;
  }
  parts.push_back(s.substr(start));
  return parts;
}

Status string_split_kernel(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Tensor* x, ctx.required_input(0));
  if (x->dtype() != DType::kString)
    return model_error(ctx.describe() + " takes a string tensor, not " +
                       std::string(dtype_name(x->dtype())));
  const std::string delim = ctx.attr_string("delimiter", "");
  int64_t maxsplit = std::numeric_limits<int64_t>::max();
  if (ctx.has_attr("maxsplit")) {
    maxsplit = ctx.attr_int("maxsplit", 0);
    if (maxsplit < 0)
      return model_error(ctx.describe() + ": attribute maxsplit must be >= 0, got " +
                         std::to_string(maxsplit));
  }
  std::vector<std::vector<std::string>> parts(static_cast<size_t>(x->numel()));
  int64_t width = 0;
  for (int64_t i = 0; i < x->numel(); ++i) {
    auto& p = parts[static_cast<size_t>(i)];
    p = split_one(x->strings()[static_cast<size_t>(i)], delim, maxsplit);
    width = std::max(width, static_cast<int64_t>(p.size()));
  }
  Shape y_shape = x->shape();
  y_shape.push_back(width);
  ODB_ASSIGN_OR_RETURN(Tensor y, Tensor::make(DType::kString, y_shape));
  ODB_ASSIGN_OR_RETURN(Tensor z, Tensor::make(DType::kInt64, x->shape()));
  for (int64_t i = 0; i < x->numel(); ++i) {
    auto& p = parts[static_cast<size_t>(i)];
    z.data<int64_t>()[i] = static_cast<int64_t>(p.size());
    for (size_t k = 0; k < p.size(); ++k)
      y.strings()[static_cast<size_t>(i * width) + k] = std::move(p[k]);
  }
  ctx.set_output(0, std::move(y));
  ctx.set_output(1, std::move(z));
  return Status::ok();
}

}  // namespace

void register_string_split(KernelRegistry& r) {
  r.add("StringSplit", 20, string_split_kernel, HalfMode::kNative);
}

}  // namespace onnxdbg::reference
