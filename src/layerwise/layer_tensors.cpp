// The first reference run of the layerwise pass (see layer_tensors.h): every compared tensor's
// name, producer, type, shape, size in memory and golden NaN/Inf count and largest magnitude.
#include "layerwise/layer_tensors.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <functional>

#include "layerwise/golden_store.h"
#include "layerwise/golden_stream.h"
#include "layerwise/node_models.h"
#include "model/quantization.h"
#include "model/shape_inference.h"

namespace onnxdbg::layerwise_detail {
namespace {

/// The golden statistics of a floating-point value: NaN/Inf count and largest finite |value|.
void scan_golden(const Tensor& value, LayerTensor* lt) {
  if (value.dtype() == DType::kFloat) {
    const FloatScan f = scan_floats(value.data<float>(), value.numel());
    lt->golden_nan_or_inf = f.nonfinite;
    lt->golden_max_abs = f.max_abs;
  } else if (is_floating(value.dtype())) {
    lt->golden_nan_or_inf = count_nan_or_inf(value);
    for (int64_t i = 0; i < value.numel(); ++i) {
      const double v = std::abs(value.get_as_double(i));
      if (std::isfinite(v)) lt->golden_max_abs = std::max(lt->golden_max_abs, v);
    }
  }
}

bool is_constant(const onnx::NodeProto& node) {
  return node.op_type() == "Constant" && node.domain().empty();  // model data, not compared
}

/// A loaded value that cannot be the model's tensor: its dtype differs from the one shape
/// inference gives the tensor, or a dimension inference knows differs. "" when it fits (or
/// inference knows nothing).
std::string misfit(const std::string& name, const Tensor& value, const onnx::TypeProto& type,
                   const onnx::NodeProto& node, size_t index, const std::string& what) {
  onnx::ValueInfoProto vi;
  vi.set_name(name);
  *vi.mutable_type() = type;
  const ValueSignature sig = value_signature(vi);
  const std::string of =
      "the model's tensor '" + name + "' (output of node " + node_label(node, index) + ")";
  if (sig.dtype != DType::kUndefined && value.dtype() != sig.dtype)
    return fmt::format("{} holds '{}' as {}, but {} is {}; was it saved from another model?", what,
                       name, dtype_name(value.dtype()), of, dtype_name(sig.dtype));
  if (!sig.has_shape) return "";
  bool fits = sig.shape.size() == value.shape().size();
  for (size_t d = 0; fits && d < sig.shape.size(); ++d)
    fits = sig.shape[d] < 0 || sig.shape[d] == value.shape()[d];
  if (fits) return "";
  std::vector<std::string> dims;
  for (int64_t d : sig.shape) dims.push_back(d >= 0 ? std::to_string(d) : "?");
  return fmt::format(
      "{} holds '{}' with shape [{}], but {} has shape [{}]; was it saved from another model?",
      what, name, shape_to_string(value.shape()), of, fmt::join(dims, "x"));
}

/// The loaded side of collect_layer_tensors: each non-Constant node output's loaded value to
/// `add`, checked against the types shape inference gives the model, or its name to `no_golden`.
Status collect_loaded(const LoadedModel& model, const TensorMap& golden,
                      const std::string& golden_source,
                      const std::function<void(const onnx::NodeProto&, size_t, const std::string&,
                                               const Tensor&)>& add,
                      std::vector<std::string>* no_golden) {
  const InferredTypes inferred = infer_shapes(model.proto);
  const std::string what = golden_label(golden_source);
  const auto& g = model.proto.graph();
  for (int i = 0; i < g.node_size(); ++i) {
    const auto& node = g.node(i);
    if (is_constant(node)) continue;
    const size_t index = static_cast<size_t>(i);
    for (const auto& o : node.output()) {
      if (o.empty()) continue;
      auto it = golden.find(o);
      if (it == golden.end()) {
        no_golden->push_back(o);
        continue;
      }
      if (auto t = inferred.types.find(o); t != inferred.types.end())
        if (std::string m = misfit(o, it->second, t->second, node, index, what); !m.empty())
          return invalid_argument(m);
      add(node, index, o, it->second);
    }
  }
  return Status::ok();
}

}  // namespace

uint64_t tensor_bytes(const Tensor& t) {
  constexpr uint64_t kHugePage = uint64_t{2} << 20;
  if (t.dtype() != DType::kString)
    return t.nbytes() >= kHugePage ? (t.nbytes() + kHugePage - 1) / kHugePage * kHugePage
                                   : t.nbytes();
  uint64_t n = 0;
  for (const auto& s : t.strings()) n += s.size() + sizeof(std::string);
  return n;
}

/// Four elements at a time on their bits (GCC vector extensions): |x| is the bits without the
/// sign, finite below the all-ones exponent, and for such values the order of the bits as
/// integers is the order of the values.
FloatScan scan_floats(const float* p, int64_t n) {
  typedef uint32_t V4u __attribute__((vector_size(16)));
  typedef int32_t V4i __attribute__((vector_size(16)));
  const uint32_t kAbs = 0x7fffffffu, kInf = 0x7f800000u;
  const V4u abs_mask = {kAbs, kAbs, kAbs, kAbs}, inf = {kInf, kInf, kInf, kInf};
  V4u vmax = {0, 0, 0, 0};
  V4i vbad = {0, 0, 0, 0};
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    V4u u;
    std::memcpy(&u, p + i, sizeof u);
    u &= abs_mask;
    const V4i finite = u < inf;  // -1 where finite
    vbad += finite + 1;          // +1 where not
    const V4u f = u & (V4u)finite;
    vmax = f > vmax ? f : vmax;
  }
  FloatScan s;
  uint32_t m = 0;
  for (int k = 0; k < 4; ++k) {
    s.nonfinite += vbad[k];
    m = std::max(m, vmax[k]);
  }
  for (; i < n; ++i) {
    uint32_t u;
    std::memcpy(&u, p + i, sizeof u);
    u &= kAbs;
    if (u < kInf)
      m = std::max(m, u);
    else
      ++s.nonfinite;
  }
  s.max_abs = std::bit_cast<float>(m);
  return s;
}

Status collect_layer_tensors(GoldenSource& src, uint64_t batch_limit, uint64_t memory_budget,
                             LayerwiseReport* rep, GoldenStore* store) {
  std::string too_big;
  uint64_t too_big_bytes = 0;
  const auto quantized = quantized_tensors(src.model().proto.graph());
  auto add = [&](const onnx::NodeProto& node, size_t index, const std::string& name,
                 const Tensor& value) {
    LayerTensor lt;
    if (auto q = quantized.find(name); q != quantized.end() && q->second.scale)
      lt.quant_scale = *q->second.scale;
    lt.name = name;
    lt.node_index = index;
    lt.node = node.name();
    lt.op_type = node.op_type();
    lt.dtype = value.dtype();
    lt.shape = value.shape();
    lt.bytes = tensor_bytes(value);
    scan_golden(value, &lt);
    if (lt.bytes > batch_limit && too_big.empty()) {
      too_big = name + "' of node " + node_label(node, index);
      too_big_bytes = lt.bytes;
    }
    rep->tensors.push_back(std::move(lt));
  };
  if (const TensorMap* golden = src.golden()) {
    ODB_RETURN_IF_ERROR(
        collect_loaded(src.model(), *golden, rep->golden_source, add, &rep->no_golden));
  } else {
    ODB_RETURN_IF_ERROR(src.run([&](const onnx::NodeProto& node, size_t index,
                                    const std::string& name, const Tensor& value) {
      if (is_constant(node)) {
        if (store) store->put_constant(name, value);
        return;
      }
      add(node, index, name, value);
      if (store) store->put(rep->tensors.size() - 1, name, value);
    }));
  }
  if (!too_big.empty()) {
    return invalid_argument(fmt::format(
        "--layerwise-memory {} is too small for tensor '{}, which holds {}: the budget must "
        "hold {} copies of the largest tensor, at least {}",
        memory_size_string(memory_budget), too_big, memory_size_string(too_big_bytes),
        kLayerwiseCopies, memory_size_string(too_big_bytes * kLayerwiseCopies)));
  }
  return Status::ok();
}

}  // namespace onnxdbg::layerwise_detail
