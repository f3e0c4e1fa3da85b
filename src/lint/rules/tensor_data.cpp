// Rule tensor_data: a tensor stored in the model (an initializer or a tensor attribute such as
// Constant's value) whose data does not fill its dims: raw_data of another byte length, or another
// count of values in its typed field (ONNX IR "Tensor Definition"). Libonnx 1.12's checker does not
// look; ONNX Runtime refuses the model on load and onnxdbg's reference refuses the tensor.
// External data is checked by the loader (model/model.cpp) before any rule runs.
#include <map>

#include "core/numel.h"
#include "lint/rule.h"
#include "onnxdbg/dtype.h"

namespace onnxdbg::lint {

namespace {

// Bytes that `numel` elements of `bits` bits each take, packed (ceil(numel * bits / 8): int4,
// float4e2m1, int2 and float6 share bytes), saturating at INT64_MAX for hostile dims.
int64_t packed_bytes(int64_t numel, int bits) {
  const int64_t total = saturating_mul(numel, static_cast<int64_t>(bits));
  return total / 8 + (total % 8 != 0);
}

// What is wrong with `t`'s data, or "" when it fills its dims (or cannot be judged: an unknown
// element type, which other rules report).
std::string data_problem(const onnx::TensorProto& t) {
  if (t.data_location() == onnx::TensorProto::EXTERNAL) return "";
  const int64_t numel = saturating_numel(t.dims());
  if (numel < 0) return "";  // negative_dims reports it
  using T = onnx::TensorProto;
  const int type = t.data_type();
  if (t.has_raw_data() && type != T::STRING) {
    auto dtype = dtype_from_onnx(type);
    if (!dtype) return "";
    const int64_t want = packed_bytes(numel, dtype_bits(*dtype));
    if (static_cast<uint64_t>(want) == t.raw_data().size()) return "";
    return "raw_data of " + std::to_string(t.raw_data().size()) + " bytes where its dims need " +
           std::to_string(want);
  }
  int64_t held = 0;
  int64_t per_element = 1;
  switch (type) {
    case T::FLOAT:
      held = t.float_data_size();
      break;
    case T::COMPLEX64:
      held = t.float_data_size();
      per_element = 2;
      break;
    case T::DOUBLE:
      held = t.double_data_size();
      break;
    case T::COMPLEX128:
      held = t.double_data_size();
      per_element = 2;
      break;
    case T::INT64:
      held = t.int64_data_size();
      break;
    case T::UINT32:
    case T::UINT64:
      held = t.uint64_data_size();
      break;
    case T::STRING:
      held = t.string_data_size();
      break;
    case T::INT32:
    case T::INT16:
    case T::INT8:
    case T::UINT16:
    case T::UINT8:
    case T::BOOL:
    case T::FLOAT16:
    case T::BFLOAT16:
      held = t.int32_data_size();
      break;
    default: {
      // The narrow types live in int32_data: one code per entry, or one packed byte per entry
      // for the 4- and 2-bit ones.
      auto dtype = dtype_from_onnx(type);
      if (!dtype || !(is_narrow_float(*dtype) || is_narrow_integer(*dtype))) return "";
      held = t.int32_data_size();
      const int bits = dtype_bits(*dtype);
      if (bits == 4 || bits == 2) {
        const int64_t need = packed_bytes(numel, bits);
        if (need == held) return "";
        return std::to_string(held) + " stored bytes where its dims need " + std::to_string(need) +
               " (" + std::to_string(8 / bits) + " packed " + std::string(dtype_name(*dtype)) +
               " values per byte)";
      }
      break;
    }
  }
  if (saturating_mul(numel, per_element) == held || (numel == 0 && held == 0)) return "";
  return std::to_string(held) + " stored values where its dims need " +
         std::to_string(saturating_mul(numel, per_element));
}

const char* kFix = "; re-export the model or fix the tensor's dims.";

}  // namespace

void lint_tensor_data(RuleContext& ctx, const GraphInfo& g) {
  // Initializers: reported on their first reader, so the finding names a node.
  std::map<std::string, std::string> bad;
  for (const auto& t : g.graph->initializer()) {
    const std::string problem = data_problem(t);
    if (!problem.empty())
      bad.emplace(t.name(), "initializer '" + t.name() + "' of dims " +
                                stored_dims_to_string(t.dims()) + " has " + problem);
  }
  for (int64_t i = 0; i < g.node_count(); ++i) {
    const auto& n = g.node(i);
    for (const auto& in : n.input()) {
      auto it = bad.find(in);
      if (it == bad.end()) continue;
      ctx.report(Severity::kError, g, i, it->second + kFix);
      bad.erase(it);
    }
    for (const auto& a : n.attribute()) {
      const std::string problem = a.has_t() ? data_problem(a.t()) : "";
      if (!problem.empty())
        ctx.report(Severity::kError, g, i,
                   "attribute '" + a.name() + "' holds a tensor of dims " +
                       stored_dims_to_string(a.t().dims()) + " with " + problem + kFix);
    }
  }
  for (const auto& [name, what] : bad)  // read by no node of this graph
    ctx.report(Severity::kError, g, -1, what + kFix);
}

}  // namespace onnxdbg::lint
