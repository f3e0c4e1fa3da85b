// make-quant-models OUT_DIR: writes the quantized (and float16) models the quantized-kernel
// benchmark (bench/quant.sh) runs on the reference interpreter and ONNX Runtime, in the forms
// onnxruntime.quantization exports (issue 19, item 2):
//   quant_dynamic_unet.onnx  a 1x3x320x320 U-Net-like segmentation net, 19 convs, each as the
//                            dynamic quantizer writes it: DynamicQuantizeLinear -> ConvInteger
//                            (uint8 x, int8 w) -> Cast -> Mul(x_scale * w_scale) -> Add(bias)
//   quant_qlinear_cnn.onnx   a 1x3x320x320 encoder in QOperator (static) form: QuantizeLinear,
//                            QLinearConv chain (per-channel int8 w, int32 bias), DequantizeLinear
//   quant_dynamic_mlp.onnx   a 256x768 transformer-FFN-like MLP: DynamicQuantizeLinear ->
//                            MatMulInteger -> Cast -> Mul -> Add, plus one QLinearMatMul
//   fp16_cnn.onnx            the encoder of quant_qlinear_cnn.onnx as a float16 Conv + Relu chain
//   fp16_mlp.onnx            a 64x768 float16 transformer-FFN-like MLP: MatMul -> Add -> Relu
//                            (768 -> 3072 -> 768, twice), then one Gemm (transB, bias C)
// and models.txt, the list bench_models reads ("file  --input-shapes ..." per line).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "model/model.h"
#include "onnxdbg/dtype.h"

namespace {

using Dims = std::vector<int64_t>;

int64_t count_of(const Dims& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

struct Builder {
  onnx::ModelProto model;
  onnx::GraphProto* g;
  int counter = 0;
  uint64_t rng = 88172645463325252ull;

  Builder(const std::string& name, int opset) {
    model.set_ir_version(8);
    model.set_producer_name("onnxdbg make-quant-models");
    model.add_opset_import()->set_version(opset);
    g = model.mutable_graph();
    g->set_name(name);
  }
  double uniform() {  // xorshift64 in [0, 1)
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return static_cast<double>(rng >> 11) * (1.0 / 9007199254740992.0);
  }
  // Roughly normal (the sum of three uniforms), mean 0, standard deviation 1.
  double normal() { return (uniform() + uniform() + uniform() - 1.5) * 2.0; }
  onnx::TensorProto* init(const std::string& prefix, int type, const Dims& dims) {
    auto* t = g->add_initializer();
    t->set_name(prefix + std::to_string(g->initializer_size()));
    t->set_data_type(type);
    for (int64_t d : dims) t->add_dims(d);
    return t;
  }
  // int8 weights as a symmetric quantizer leaves them: normal-looking, saturated at +-127.
  std::string int8_weight(const Dims& dims) {
    auto* t = init("wq", onnx::TensorProto::INT8, dims);
    std::string raw(static_cast<size_t>(count_of(dims)), '\0');
    for (auto& c : raw)
      c = static_cast<char>(
          static_cast<int8_t>(std::clamp(std::nearbyint(normal() * 40), -127.0, 127.0)));
    t->set_raw_data(raw);
    return t->name();
  }
  std::string floats(const Dims& dims, double scale, double offset = 0) {
    auto* t = init("f", onnx::TensorProto::FLOAT, dims);
    for (int64_t i = 0; i < count_of(dims); ++i)
      t->add_float_data(static_cast<float>(offset + normal() * scale));
    return t->name();
  }
  std::string halves(const Dims& dims, double scale) {
    auto* t = init("h", onnx::TensorProto::FLOAT16, dims);
    for (int64_t i = 0; i < count_of(dims); ++i)
      t->add_int32_data(onnxdbg::Float16(static_cast<float>(normal() * scale)).bits);
    return t->name();
  }
  std::string scalar_float(float v) {
    auto* t = init("s", onnx::TensorProto::FLOAT, {});
    t->add_float_data(v);
    return t->name();
  }
  std::string scalar_int(int type, int32_t v) {
    auto* t = init("z", type, {});
    t->add_int32_data(v);
    return t->name();
  }
  std::string int32s(const Dims& dims, double scale) {
    auto* t = init("b", onnx::TensorProto::INT32, dims);
    for (int64_t i = 0; i < count_of(dims); ++i)
      t->add_int32_data(static_cast<int32_t>(std::nearbyint(normal() * scale)));
    return t->name();
  }
  std::string int64s(const Dims& v) {
    auto* t = init("c", onnx::TensorProto::INT64, {static_cast<int64_t>(v.size())});
    for (int64_t x : v) t->add_int64_data(x);
    return t->name();
  }
  onnx::NodeProto* node(const std::string& op, const std::vector<std::string>& inputs,
                        int outputs = 1) {
    auto* n = g->add_node();
    n->set_op_type(op);
    n->set_name("/" + op + "_" + std::to_string(counter));
    for (const auto& i : inputs) n->add_input(i);
    for (int o = 0; o < outputs; ++o)
      n->add_output("t" + std::to_string(counter) + (o ? "_" + std::to_string(o) : ""));
    ++counter;
    return n;
  }
  std::string op(const std::string& o, const std::vector<std::string>& inputs) {
    return node(o, inputs)->output(0);
  }
  static void attr_i(onnx::NodeProto* n, const std::string& name, int64_t v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }
  static void attr_ints(onnx::NodeProto* n, const std::string& name, const Dims& v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t x : v) a->add_ints(x);
  }
  void io(const std::string& in, int type, const Dims& shape, const std::string& out) {
    auto* vi = g->add_input();
    vi->set_name(in);
    auto* t = vi->mutable_type()->mutable_tensor_type();
    t->set_elem_type(type);
    for (int64_t d : shape) t->mutable_shape()->add_dim()->set_dim_value(d);
    auto* vo = g->add_output();
    vo->set_name(out);
    vo->mutable_type()->mutable_tensor_type()->set_elem_type(type);
  }
};

// One conv layer's geometry: 3x3 (or k x k) with "same" padding, stride, dilation, groups.
struct ConvSpec {
  int64_t cin, cout, k = 3, stride = 1, dilation = 1, group = 1;
};

void conv_attrs(onnx::NodeProto* n, const ConvSpec& c) {
  const int64_t pad = (c.k - 1) / 2 * c.dilation;
  Builder::attr_ints(n, "kernel_shape", {c.k, c.k});
  Builder::attr_ints(n, "pads", {pad, pad, pad, pad});
  Builder::attr_ints(n, "strides", {c.stride, c.stride});
  Builder::attr_ints(n, "dilations", {c.dilation, c.dilation});
  if (c.group > 1) Builder::attr_i(n, "group", c.group);
}

// He-like scale of a real weight whose int8 values have standard deviation 40.
float weight_scale(const ConvSpec& c) {
  const double fan_in = static_cast<double>(c.cin / c.group * c.k * c.k);
  return static_cast<float>(std::sqrt(2.0 / fan_in) / 40.0);
}

// The dynamic quantizer's Conv: DynamicQuantizeLinear -> ConvInteger -> Cast -> Mul -> Add, and
// a Relu unless `relu` is false.
std::string dynamic_conv(Builder& b, const std::string& x, const ConvSpec& c, bool relu = true) {
  auto* dq = b.node("DynamicQuantizeLinear", {x}, 3);
  const std::string w = b.int8_weight({c.cout, c.cin / c.group, c.k, c.k});
  auto* ci = b.node("ConvInteger",
                    {dq->output(0), w, dq->output(2), b.scalar_int(onnx::TensorProto::INT8, 0)});
  conv_attrs(ci, c);
  auto* cast = b.node("Cast", {ci->output(0)});
  Builder::attr_i(cast, "to", onnx::TensorProto::FLOAT);
  const std::string scale = b.op("Mul", {dq->output(1), b.scalar_float(weight_scale(c))});
  std::string y = b.op("Mul", {cast->output(0), scale});
  y = b.op("Add", {y, b.floats({c.cout, 1, 1}, 0.05)});
  return relu ? b.op("Relu", {y}) : y;
}

std::string upsample2(Builder& b, const std::string& x) {
  auto* n = b.node("Resize", {x, "", b.floats({4}, 0, 0)});
  // The scales initializer: 1, 1, 2, 2.
  auto& scales = *b.g->mutable_initializer(b.g->initializer_size() - 1);
  scales.clear_float_data();
  for (float s : {1.0f, 1.0f, 2.0f, 2.0f}) scales.add_float_data(s);
  auto* a = n->add_attribute();
  a->set_name("mode");
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s("nearest");
  return n->output(0);
}

std::string concat(Builder& b, const std::string& x, const std::string& y) {
  auto* n = b.node("Concat", {x, y});
  Builder::attr_i(n, "axis", 1);
  return n->output(0);
}

onnx::ModelProto dynamic_unet() {
  Builder b("quant_dynamic_unet", 13);
  b.io("input", onnx::TensorProto::FLOAT, {1, 3, 320, 320}, "mask");
  std::string x = dynamic_conv(b, "input", {3, 16});
  const std::string e1 = x = dynamic_conv(b, x, {16, 16});
  x = dynamic_conv(b, x, {16, 32, 3, 2});
  const std::string e2 = x = dynamic_conv(b, x, {32, 32});
  x = dynamic_conv(b, x, {32, 64, 3, 2});
  const std::string e3 = x = dynamic_conv(b, x, {64, 64});
  x = dynamic_conv(b, x, {64, 128, 3, 2});
  x = dynamic_conv(b, x, {128, 128});
  x = dynamic_conv(b, x, {128, 128, 3, 1, 2});       // dilated
  x = dynamic_conv(b, x, {128, 128, 3, 1, 1, 128});  // depthwise
  x = dynamic_conv(b, x, {128, 128, 1, 1, 1, 1});    // pointwise
  x = dynamic_conv(b, concat(b, upsample2(b, x), e3), {192, 64});
  x = dynamic_conv(b, x, {64, 64, 3, 1, 1, 4});  // grouped
  x = dynamic_conv(b, concat(b, upsample2(b, x), e2), {96, 32});
  x = dynamic_conv(b, x, {32, 32});
  x = dynamic_conv(b, concat(b, upsample2(b, x), e1), {48, 16});
  x = dynamic_conv(b, x, {16, 16});
  x = dynamic_conv(b, x, {16, 16});
  x = dynamic_conv(b, x, {16, 1, 1}, false);
  b.node("Sigmoid", {x})->set_output(0, "mask");
  return b.model;
}

// A QLinearConv: uint8 x with scale `xs` (zero point 0), per-output-channel int8 w (zero point
// 0), int32 bias, uint8 y with scale `ys` and zero point 0 (so negatives clamp: a fused ReLU).
std::string qlinear_conv(Builder& b, const std::string& x, float xs, float ys, const ConvSpec& c) {
  const std::string w = b.int8_weight({c.cout, c.cin / c.group, c.k, c.k});
  const float ws = weight_scale(c);
  const std::string w_scale = b.floats({c.cout}, ws * 0.1, ws);
  auto* wz = b.init("z", onnx::TensorProto::INT8, {c.cout});
  wz->set_raw_data(std::string(static_cast<size_t>(c.cout), '\0'));
  auto* n = b.node("QLinearConv",
                   {x, b.scalar_float(xs), b.scalar_int(onnx::TensorProto::UINT8, 0), w, w_scale,
                    wz->name(), b.scalar_float(ys), b.scalar_int(onnx::TensorProto::UINT8, 0),
                    b.int32s({c.cout}, 0.05 / (xs * ws))});
  conv_attrs(n, c);
  return n->output(0);
}

// The encoder both the QLinearConv model and the float16 model have: 12 convs, 320 -> 40.
const std::vector<ConvSpec>& encoder() {
  static const std::vector<ConvSpec> specs = {{3, 16},
                                              {16, 16},
                                              {16, 32, 3, 2},
                                              {32, 32},
                                              {32, 64, 3, 2},
                                              {64, 64},
                                              {64, 64},
                                              {64, 128, 3, 2},
                                              {128, 128},
                                              {128, 128, 3, 1, 2},
                                              {128, 128, 3, 1, 1, 128},
                                              {128, 128, 1}};
  return specs;
}

onnx::ModelProto qlinear_cnn() {
  Builder b("quant_qlinear_cnn", 13);
  b.io("input", onnx::TensorProto::FLOAT, {1, 3, 320, 320}, "features");
  const float act_scale = 6.0f / 255.0f;
  std::string x = b.op("QuantizeLinear", {"input", b.scalar_float(2.0f / 255.0f),
                                          b.scalar_int(onnx::TensorProto::UINT8, 128)});
  // The first conv reads the input's quantization (zero point 128), the others ReLU-like
  // activations (zero point 0).
  bool first = true;
  for (const ConvSpec& c : encoder()) {
    if (first) {
      const std::string w = b.int8_weight({c.cout, c.cin, c.k, c.k});
      auto* n =
          b.node("QLinearConv",
                 {x, b.scalar_float(2.0f / 255.0f), b.scalar_int(onnx::TensorProto::UINT8, 128), w,
                  b.scalar_float(weight_scale(c)), b.scalar_int(onnx::TensorProto::INT8, 0),
                  b.scalar_float(act_scale), b.scalar_int(onnx::TensorProto::UINT8, 0)});
      conv_attrs(n, c);
      x = n->output(0);
      first = false;
      continue;
    }
    x = qlinear_conv(b, x, act_scale, act_scale, c);
  }
  b.node("DequantizeLinear",
         {x, b.scalar_float(act_scale), b.scalar_int(onnx::TensorProto::UINT8, 0)})
      ->set_output(0, "features");
  return b.model;
}

// The (K, N) of the MLPs' four layers: a transformer FFN (768 -> 3072 -> 768), twice.
const std::vector<std::pair<int64_t, int64_t>> kFfnLayers = {
    {768, 3072}, {3072, 768}, {768, 3072}, {3072, 768}};

onnx::ModelProto dynamic_mlp() {
  Builder b("quant_dynamic_mlp", 13);
  b.io("input", onnx::TensorProto::FLOAT, {256, 768}, "output");
  std::string x = "input";
  for (auto [k, n] : kFfnLayers) {
    auto* dq = b.node("DynamicQuantizeLinear", {x}, 3);
    const std::string mm =
        b.op("MatMulInteger", {dq->output(0), b.int8_weight({k, n}), dq->output(2),
                               b.scalar_int(onnx::TensorProto::INT8, 0)});
    auto* cast = b.node("Cast", {mm});
    Builder::attr_i(cast, "to", onnx::TensorProto::FLOAT);
    const float ws = static_cast<float>(std::sqrt(2.0 / static_cast<double>(k)) / 40.0);
    const std::string scale = b.op("Mul", {dq->output(1), b.scalar_float(ws)});
    x = b.op("Relu", {b.op("Add", {b.op("Mul", {cast->output(0), scale}), b.floats({n}, 0.05)})});
  }
  // One QLinearMatMul: 768 -> 768 on the quantized activations.
  const float s = 4.0f / 255.0f;
  const std::string q =
      b.op("QuantizeLinear", {x, b.scalar_float(s), b.scalar_int(onnx::TensorProto::UINT8, 0)});
  const std::string y =
      b.op("QLinearMatMul", {q, b.scalar_float(s), b.scalar_int(onnx::TensorProto::UINT8, 0),
                             b.int8_weight({768, 768}), b.scalar_float(0.001f),
                             b.scalar_int(onnx::TensorProto::INT8, 0), b.scalar_float(s),
                             b.scalar_int(onnx::TensorProto::UINT8, 0)});
  b.node("DequantizeLinear", {y, b.scalar_float(s), b.scalar_int(onnx::TensorProto::UINT8, 0)})
      ->set_output(0, "output");
  return b.model;
}

onnx::ModelProto fp16_cnn() {
  Builder b("fp16_cnn", 13);
  b.io("input", onnx::TensorProto::FLOAT16, {1, 3, 320, 320}, "features");
  std::string x = "input";
  for (const ConvSpec& c : encoder()) {
    auto* n =
        b.node("Conv", {x,
                        b.halves({c.cout, c.cin / c.group, c.k, c.k},
                                 std::sqrt(2.0 / static_cast<double>(c.cin / c.group * c.k * c.k))),
                        b.halves({c.cout}, 0.05)});
    conv_attrs(n, c);
    x = b.op("Relu", {n->output(0)});
  }
  b.g->mutable_node(b.g->node_size() - 1)->set_output(0, "features");
  return b.model;
}

onnx::ModelProto fp16_mlp() {
  Builder b("fp16_mlp", 13);
  b.io("input", onnx::TensorProto::FLOAT16, {64, 768}, "output");
  std::string x = "input";
  for (auto [k, n] : kFfnLayers) {
    const std::string mm =
        b.op("MatMul", {x, b.halves({k, n}, std::sqrt(2.0 / static_cast<double>(k)))});
    x = b.op("Relu", {b.op("Add", {mm, b.halves({n}, 0.05)})});
  }
  auto* gemm =
      b.node("Gemm", {x, b.halves({768, 768}, std::sqrt(2.0 / 768.0)), b.halves({768}, 0.05)});
  Builder::attr_i(gemm, "transB", 1);
  gemm->set_output(0, "output");
  return b.model;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: make-quant-models OUT_DIR\n";
    return 2;
  }
  const std::filesystem::path dir = argv[1];
  std::filesystem::create_directories(dir);
  const std::vector<std::pair<std::string, onnx::ModelProto>> models = {
      {"quant_dynamic_unet.onnx", dynamic_unet()},
      {"quant_qlinear_cnn.onnx", qlinear_cnn()},
      {"quant_dynamic_mlp.onnx", dynamic_mlp()},
      {"fp16_cnn.onnx", fp16_cnn()},
      {"fp16_mlp.onnx", fp16_mlp()}};
  for (const auto& [name, model] : models) {
    if (auto st = onnxdbg::save_model(model, dir / name); !st) {
      std::cerr << "make-quant-models: " << st.to_string() << "\n";
      return 1;
    }
  }
  std::ofstream list(dir / "models.txt");
  list << "# make-quant-models' models and their input shapes (bench_models reads this list).\n"
          "quant_dynamic_unet.onnx   --input-shapes input:1x3x320x320\n"
          "quant_qlinear_cnn.onnx    --input-shapes input:1x3x320x320\n"
          "quant_dynamic_mlp.onnx    --input-shapes input:256x768\n"
          "fp16_cnn.onnx             --input-shapes input:1x3x320x320\n"
          "fp16_mlp.onnx             --input-shapes input:64x768\n";
  return list ? 0 : 1;
}
