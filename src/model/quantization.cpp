// quantized_tensors: one pass over the nodes, each QDQ or integer op naming the scale and zero
// point of the tensors it makes or takes; one-value scales and zero points are read from
// initializers and Constant nodes (never from external data: a scalar is always inline).
#include "model/quantization.h"

#include <fmt/format.h>

#include <vector>

#include "model/model.h"

namespace onnxdbg {
namespace {

// Inline tensors by name: initializers and the `value` of Constant nodes.
std::map<std::string, const onnx::TensorProto*> constants_of(const onnx::GraphProto& g) {
  std::map<std::string, const onnx::TensorProto*> out;
  for (const auto& t : g.initializer()) out[t.name()] = &t;
  for (const auto& n : g.node())
    if (n.op_type() == "Constant" && n.domain().empty() && n.output_size() == 1)
      for (const auto& a : n.attribute())
        if (a.name() == "value" && a.has_t()) out[n.output(0)] = &a.t();
  return out;
}

int64_t element_count(const onnx::TensorProto& t) {
  int64_t n = 1;
  for (int64_t d : t.dims()) n = d < 0 || (d && n > INT64_MAX / d) ? -1 : n * d;
  return n;
}

// The one value of an inline tensor, unset for any other (external, several values, unreadable).
std::optional<double> one_value(const std::map<std::string, const onnx::TensorProto*>& consts,
                                const std::string& name) {
  auto it = consts.find(name);
  if (name.empty() || it == consts.end()) return std::nullopt;
  const onnx::TensorProto& t = *it->second;
  if (element_count(t) != 1 || t.data_location() == onnx::TensorProto::EXTERNAL)
    return std::nullopt;
  auto v = tensor_from_proto(t, ".");
  if (!v || v->numel() != 1) return std::nullopt;
  return v->get_as_double(0);
}

}  // namespace

std::map<std::string, QuantParams> quantized_tensors(const onnx::GraphProto& graph) {
  const auto consts = constants_of(graph);
  std::map<std::string, QuantParams> out;
  auto input = [](const onnx::NodeProto& n, int i) {
    return i < n.input_size() ? n.input(i) : std::string();
  };
  auto note = [&](const onnx::NodeProto& n, const std::string& tensor, const std::string& scale,
                  const std::string& zero_point, bool computed = false) {
    if (tensor.empty() || out.count(tensor)) return;
    QuantParams q;
    q.op_type = n.op_type();
    q.scale_tensor = scale;
    q.zero_point_tensor = zero_point;
    if (!computed) {
      q.scale = one_value(consts, scale);
      if (auto it = consts.find(scale); it != consts.end())
        q.scale_count = element_count(*it->second);
      // An omitted zero point is 0 (QuantizeLinear/DequantizeLinear spec).
      q.zero_point =
          zero_point.empty() ? std::optional<double>(0.0) : one_value(consts, zero_point);
    }
    out.emplace(tensor, std::move(q));
  };
  for (const auto& n : graph.node()) {
    if (!n.domain().empty() && n.domain() != "ai.onnx") continue;
    const std::string& op = n.op_type();
    if (op == "QuantizeLinear" && n.output_size() > 0) {
      note(n, n.output(0), input(n, 1), input(n, 2));
    } else if (op == "DequantizeLinear") {
      note(n, input(n, 0), input(n, 1), input(n, 2));
    } else if (op == "DynamicQuantizeLinear" && n.output_size() >= 3) {
      note(n, n.output(0), n.output(1), n.output(2), /*computed=*/true);
    } else if (op == "QLinearConv" || op == "QLinearMatMul") {
      // x (or a) with 1, 2; w (or b) with 4, 5; y with 6, 7.
      note(n, input(n, 0), input(n, 1), input(n, 2));
      note(n, input(n, 3), input(n, 4), input(n, 5));
      if (n.output_size() > 0) note(n, n.output(0), input(n, 6), input(n, 7));
    }
  }
  return out;
}

std::string quant_params_text(const QuantParams& q) {
  std::string scale;
  if (q.scale)
    scale = fmt::format("scale {:.6g}", *q.scale);
  else if (q.scale_count > 1)
    scale = fmt::format("per-axis scale [{}]", q.scale_count);
  else
    scale = "scale '" + q.scale_tensor + "' (computed)";
  std::string zp;
  if (q.zero_point)
    zp = fmt::format("zero point {:.6g}", *q.zero_point);
  else if (!q.zero_point_tensor.empty())
    zp = "zero point '" + q.zero_point_tensor + "'";
  return zp.empty() ? scale : scale + ", " + zp;
}

}  // namespace onnxdbg
