// MatMul and Gemm on float16 (reference/ops/float16_operands.h): the float32 result on the same
// values rounded once to float16, bit for bit, on every run of one interpreter; a weight (an
// initializer) converted once and kept as the node's state, and a graph input of the same name
// overriding it used instead of the kept copy.
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "model/model.h"
#include "op_test_util.h"
#include "reference/interpreter.h"

namespace onnxdbg::testing {
namespace {

std::vector<float> random_halves(std::mt19937& rng, int64_t n) {
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(static_cast<float>(Float16(dist(rng))));
  return v;
}

// `body` over float16 (the model under test, weights `w` as initializers of the given shapes) and
// over float32 (every operand fed), run three times with new inputs `x`, and once with the first
// weight fed through the graph input of its name: each float16 result must be the float32 one
// rounded once. `state_bytes`: what the float16 interpreter keeps after a run (the first weight
// in float32).
void check_against_float32(const std::string& signature, const std::string& body,
                           const std::map<std::string, Shape>& inputs,
                           const std::map<std::string, Shape>& weights, const Shape& out,
                           size_t state_bytes) {
  std::mt19937 rng(5);
  auto text = [&](const std::string& type) {
    std::string s = signature;
    for (size_t at; (at = s.find("T[")) != std::string::npos;) s.replace(at, 1, type);
    return "<ir_version: 8, opset_import: [\"\" : 13]>\ng " + s + " { " + body + " }";
  };
  onnx::ModelProto half = parse_text_model(text("float16"));
  std::map<std::string, std::vector<float>> weight_values;
  for (const auto& [name, shape] : weights) {
    weight_values[name] = random_halves(rng, count_of(shape));
    *half.mutable_graph()->add_initializer() =
        tensor_to_proto(f16(shape, weight_values[name]), name);
  }
  auto interpreter = reference::Interpreter::create(half);
  ASSERT_TRUE(interpreter.has_value()) << interpreter.status().message();
  const std::string full = text("float");
  for (int run = 0; run < 4; ++run) {
    SCOPED_TRACE("run " + std::to_string(run));
    std::map<std::string, Tensor> half_feeds, full_feeds;
    std::map<std::string, std::vector<float>> values = weight_values;
    for (const auto& [name, shape] : inputs) values[name] = random_halves(rng, count_of(shape));
    const std::string& first_weight = weights.begin()->first;
    if (run == 3) {  // the weight overridden by a graph input of its name
      values[first_weight] = random_halves(rng, count_of(weights.begin()->second));
      half_feeds[first_weight] = f16(weights.begin()->second, values[first_weight]);
    }
    for (const auto& [name, shape] : inputs) half_feeds[name] = f16(shape, values[name]);
    for (const auto& [name, v] : values) {
      const Shape& shape = inputs.count(name) ? inputs.at(name) : weights.at(name);
      full_feeds[name] = f32(shape, v);
    }
    auto got = (*interpreter)->run(half_feeds);
    ASSERT_TRUE(got.has_value()) << got.status().message();
    EXPECT_EQ((*interpreter)->kernel_state_bytes(), state_bytes);
    const Tensor& y = got->at("z");
    const Tensor want = run_op(full, full_feeds);
    ASSERT_EQ(y.dtype(), DType::kFloat16);
    ASSERT_EQ(y.shape(), out);
    ASSERT_EQ(want.shape(), out);
    for (int64_t i = 0; i < y.numel(); ++i)
      ASSERT_EQ(y.data<Float16>()[i].bits, Float16(want.data<float>()[i]).bits) << "at " << i;
  }
}

TEST(MatMulFloat16, IsTheFloat32ProductRoundedOnceWithTheWeightKept) {
  // A batch sharing B (one folded GEMM), a batch of Bs (a GEMM each), and a single row (GEMV).
  check_against_float32("(T[3,5,70] x, T[70,40] w) => (T[3,5,40] z)", "z = MatMul(x, w)",
                        {{"x", {3, 5, 70}}}, {{"w", {70, 40}}}, {3, 5, 40},
                        70 * 40 * sizeof(float));
  check_against_float32("(T[3,5,70] x, T[3,70,40] w) => (T[3,5,40] z)", "z = MatMul(x, w)",
                        {{"x", {3, 5, 70}}}, {{"w", {3, 70, 40}}}, {3, 5, 40},
                        3 * 70 * 40 * sizeof(float));
  check_against_float32("(T[1,300] x, T[300,20] w) => (T[1,20] z)", "z = MatMul(x, w)",
                        {{"x", {1, 300}}}, {{"w", {300, 20}}}, {1, 20}, 300 * 20 * sizeof(float));
}

TEST(GemmFloat16, IsTheFloat32GemmRoundedOnceWithTheWeightKept) {
  // B (transposed) kept; C, a second constant, converted on every run.
  check_against_float32("(T[7,50] x, T[30,50] w, T[30] z_c) => (T[7,30] z)",
                        "z = Gemm<transB = 1, alpha = 0.5, beta = 2.0>(x, w, z_c)",
                        {{"x", {7, 50}}}, {{"w", {30, 50}}, {"z_c", {30}}}, {7, 30},
                        30 * 50 * sizeof(float));
}

}  // namespace
}  // namespace onnxdbg::testing
