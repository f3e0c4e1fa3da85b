// RegexFullMatch: bool Y[i] = whether the whole of string X[i] matches attribute `pattern`
// (RegexFullMatch-20). ONNX specifies RE2 syntax; this kernel uses std::regex's ECMAScript
// grammar, which agrees on the common subset (classes \w \d \s \b, groups, alternation, bounded
// repeats, anchors). It differs where RE2 has (?P<name>...), \A \z, \pN Unicode classes and inline
// flags such as (?i), which ECMAScript refuses (an error naming the pattern), and where
// ECMAScript has backreferences and lookahead, which RE2 refuses; both match bytes, not UTF-8
// characters, in character classes here. libstdc++'s matcher recurses once or more per input
// character (a 15,000-byte string overflows an 8 MiB stack), so strings longer than
// kMaxMatchBytes are refused rather than matched.
#include <regex>

#include "reference/kernel_util.h"

namespace onnxdbg::reference {
namespace {

// The longest string matched: with nested groups std::regex takes about 1 KiB of stack per byte.
constexpr size_t kMaxMatchBytes = 1024;

Status regex_full_match_kernel(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Tensor* x, ctx.required_input(0));
  if (x->dtype() != DType::kString)
    return model_error(ctx.describe() + " takes a string tensor, not " +
                       std::string(dtype_name(x->dtype())));
  if (!ctx.has_attr("pattern"))
    return model_error(ctx.describe() + " is missing its required attribute 'pattern'");
  const std::string pattern = ctx.attr_string("pattern", "");
  std::regex re;
  try {
    re = std::regex(pattern, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    return unsupported(
        ctx.describe() + ": pattern \"" + pattern +
        "\" is not a regular expression std::regex (ECMAScript) accepts: " + e.what());
  }
  for (int64_t i = 0; i < x->numel(); ++i)
    if (const size_t n = x->strings()[static_cast<size_t>(i)].size(); n > kMaxMatchBytes)
      return unsupported(ctx.describe() + ": element " + std::to_string(i) + " has " +
                         std::to_string(n) + " bytes, more than the " +
                         std::to_string(kMaxMatchBytes) +
                         " std::regex's recursive matcher is given here (it would overflow the "
                         "stack)");
  ODB_ASSIGN_OR_RETURN(Tensor y, Tensor::make(DType::kBool, x->shape()));
  bool* py = y.data<bool>();
  try {
    for (int64_t i = 0; i < x->numel(); ++i)
      py[i] = std::regex_match(x->strings()[static_cast<size_t>(i)], re);
  } catch (const std::regex_error& e) {  // error_complexity, error_stack
    return unsupported(ctx.describe() + ": matching pattern \"" + pattern +
                       "\" was too complex for std::regex: " + e.what());
  }
  ctx.set_output(0, std::move(y));
  return Status::ok();
}

}  // namespace

void register_regex_full_match(KernelRegistry& r) {
  r.add("RegexFullMatch", 20, regex_full_match_kernel, HalfMode::kNative);
}

}  // namespace onnxdbg::reference
