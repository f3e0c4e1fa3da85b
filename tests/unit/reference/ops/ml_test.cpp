// The ai.onnx.ml kernels: hand-computed values from the spec for each op, every post_transform
// and tree aggregate, base_values, int64 and string labels, ZipMap's sequence of maps, errors
// that name the node, and the same models run on ONNX Runtime (through the worker) agreeing;
// LabelEncoder-4's tensor attributes and TreeEnsemble-5 on the reference alone.
#include <cmath>
#include <limits>

#include "backends/backend.h"
#include "backends/backend_test_util.h"
#include "op_test_util.h"

namespace onnxdbg::testing {
namespace {

const char* kHeader = R"(<ir_version: 8, opset_import: ["" : 17, "ai.onnx.ml" : 3]>
)";

// Runs `text` on the reference and on ONNX Runtime and expects every output of the reference to
// match ONNX Runtime's: same dtype and shape, labels and strings equal, numbers within atol +
// rtol * |ort|. Output `skip` is not compared. Returns the reference outputs.
std::map<std::string, Tensor> run_and_match_onnxruntime(const std::string& text,
                                                        const TensorMap& inputs, double atol = 1e-5,
                                                        double rtol = 1e-5,
                                                        const std::string& skip = "") {
  auto ref = run_reference(parse_text_model(text), inputs);
  ModelDir dir;
  const auto path = dir.write_model(text);
  auto backend = create_backend(BackendSpec{"onnxruntime", {}});
  EXPECT_TRUE(backend.has_value()) << backend.status().to_string();
  if (!backend) return ref;
  auto session = (*backend)->load(path);
  EXPECT_TRUE(session.has_value()) << session.status().to_string();
  if (!session) return ref;
  auto out = (*session)->run(inputs);
  EXPECT_TRUE(out.has_value()) << out.status().to_string();
  if (!out) return ref;
  for (const auto& [name, t] : ref) {
    if (name == skip) continue;
    SCOPED_TRACE("output " + name);
    auto it = out->outputs.find(name);
    if (it == out->outputs.end()) {
      ADD_FAILURE() << "onnxruntime gave no output " << name;
      continue;
    }
    const Tensor& o = it->second;
    EXPECT_EQ(dtype_name(t.dtype()), dtype_name(o.dtype()));
    EXPECT_EQ(shape_to_string(t.shape()), shape_to_string(o.shape()));
    if (t.dtype() != o.dtype() || t.shape() != o.shape()) continue;
    if (t.dtype() == DType::kString) {
      EXPECT_EQ(t.strings(), o.strings());
      continue;
    }
    for (int64_t i = 0; i < t.numel(); ++i) {
      const double a = t.get_as_double(i), b = o.get_as_double(i);
      EXPECT_LE(std::abs(a - b), atol + rtol * std::abs(b))
          << "element " << i << ": reference " << a << ", onnxruntime " << b;
    }
  }
  return ref;
}

std::vector<std::string> strings_of(const Tensor& t) { return t.strings(); }

// `text` with its first `from` replaced by `to` (a test failure when absent).
std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return at == std::string::npos ? text : text.replace(at, from.size(), to);
}

// The declared type of two labels given by the attribute text `labels` (ONNX Runtime wants the
// graph outputs typed).
std::string label_type(const std::string& labels) {
  return labels.find("strings") != std::string::npos ? "string[2]" : "int64[2]";
}

Tensor x2x2() { return f32({2, 2}, {1, 2, 3, -1}); }

// ---- LinearClassifier --------------------------------------------------------------------

std::string linear_classifier(const std::string& transform, const std::string& labels) {
  return std::string(kHeader) + R"(g (float[2,2] x) => ()" + label_type(labels) +
         R"( y, float[2,3] z) {
  y, z = ai.onnx.ml.LinearClassifier<coefficients = [1.0, 0.0, 0.0, 1.0, -1.0, 0.5],
      intercepts = [0.0, 0.5, 0.0], )" +
         labels + R"(, post_transform = ")" + transform + R"(">(x)
})";
}

TEST(MlLinearClassifier, EveryPostTransformMatchesSpecAndOnnxRuntime) {
  // Raw scores: row 0 [1, 2.5, 0], row 1 [3, -0.5, -3.5].
  const std::map<std::string, std::vector<double>> expected = {
      {"NONE", {1, 2.5, 0, 3, -0.5, -3.5}},
      {"SOFTMAX", {0.1709528, 0.7661572, 0.06289001, 0.9692732, 0.02926952, 0.001457243}},
      {"LOGISTIC", {0.7310586, 0.9241418, 0.5, 0.9525741, 0.3775407, 0.02931223}},
      // The 0 score stays 0 rather than counting exp(0 - max).
      {"SOFTMAX_ZERO", {0.1824255, 0.8175745, 0, 0.9692732, 0.02926952, 0.001457243}},
  };
  for (const auto& [transform, z] : expected) {
    SCOPED_TRACE(transform);
    auto out = run_and_match_onnxruntime(
        linear_classifier(transform, "classlabels_ints = [10, 20, 30]"), {{"x", x2x2()}});
    ASSERT_EQ(out["y"].dtype(), DType::kInt64);
    EXPECT_EQ(values(out["y"]), (std::vector<double>{20, 10}));
    expect_tensor_near(out["z"], {2, 3}, z, 1e-6);
  }
}

TEST(MlLinearClassifier, ProbitAndStringLabels) {
  // PROBIT of the raw scores 0.1, 0.5, 0.9 (Winitzki's erfinv, as ONNX's reference computes).
  const std::string text =
      std::string(kHeader) + R"(g (float[1,1] x) => (string[1] y, float[1,3] z) {
  y, z = ai.onnx.ml.LinearClassifier<coefficients = [1.0, 1.0, 1.0], intercepts = [0.0, 0.4, 0.8],
      classlabels_strings = ["a", "b", "c"], post_transform = "PROBIT">(x)
})";
  auto out = run_and_match_onnxruntime(text, {{"x", f32({1, 1}, {0.1f})}}, 1e-5, 1e-4);
  EXPECT_EQ(strings_of(out["y"]), std::vector<std::string>{"c"});
  expect_tensor_near(out["z"], {1, 3}, {-1.281713, 0, 1.281713}, 1e-5);
  auto s = run_and_match_onnxruntime(
      linear_classifier("NONE", R"(classlabels_strings = ["a", "b", "c"])"), {{"x", x2x2()}});
  EXPECT_EQ(strings_of(s["y"]), (std::vector<std::string>{"b", "a"}));
}

TEST(MlLinearClassifier, BinaryWithOneRowOfCoefficients) {
  // One score s = x0 - x1: Y = labels[1] when s > 0; Z = [1 - s, s].
  const std::string text =
      std::string(kHeader) + R"(g (float[2,2] x) => (int64[2] y, float[2,2] z) {
  y, z = ai.onnx.ml.LinearClassifier<coefficients = [1.0, -1.0], intercepts = [0.0],
      classlabels_ints = [0, 1]>(x)
})";
  auto out = run_and_match_onnxruntime(text, {{"x", x2x2()}});
  EXPECT_EQ(values(out["y"]), (std::vector<double>{0, 1}));
  expect_tensor_near(out["z"], {2, 2}, {2, -1, -3, 4});
}

TEST(MlLinearClassifier, BadAttributesNameTheNode) {
  auto err = run_op_error(std::string(kHeader) + R"(g (float[2,2] x) => (y, z) {
  y, z = ai.onnx.ml.LinearClassifier<coefficients = [1.0, 2.0, 3.0], classlabels_ints = [1, 2]>(x)
})",
                          {{"x", x2x2()}});
  EXPECT_NE(err.find("3 coefficients, which is not a positive multiple of the 2 features"),
            std::string::npos)
      << err;
  err = run_op_error(std::string(kHeader) + R"(g (float[2,2] x) => (y, z) {
  y, z = ai.onnx.ml.LinearClassifier<coefficients = [1.0, 2.0], classlabels_ints = [1, 2, 3, 4]>(x)
})",
                     {{"x", x2x2()}});
  EXPECT_NE(err.find("4 class labels for 1 rows"), std::string::npos) << err;
  err = run_op_error(linear_classifier("SQUASH", "classlabels_ints = [1, 2, 3]"), {{"x", x2x2()}});
  EXPECT_NE(err.find("post_transform 'SQUASH' is not one of"), std::string::npos) << err;
  EXPECT_NE(err.find("(LinearClassifier)"), std::string::npos) << err;
}

// ---- LinearRegressor ---------------------------------------------------------------------

TEST(MlLinearRegressor, TargetsInterceptsAndIntInput) {
  // Y = [x0 + 2 x1 + 0.5, -x0 + 0.5 x1 - 1].
  const std::string text = std::string(kHeader) + R"(g (float[2,2] x) => (float[2,2] y) {
  y = ai.onnx.ml.LinearRegressor<coefficients = [1.0, 2.0, -1.0, 0.5], intercepts = [0.5, -1.0],
      targets = 2>(x)
})";
  auto y = run_and_match_onnxruntime(text, {{"x", x2x2()}});
  expect_tensor_near(y["y"], {2, 2}, {5.5, -1, 1.5, -4.5});
  const std::string ints = std::string(kHeader) + R"(g (int64[3] x) => (float[1,1] y) {
  y = ai.onnx.ml.LinearRegressor<coefficients = [1.0, 10.0, 100.0]>(x)
})";
  // ONNX Runtime implements LinearRegressor for float input only.
  auto yi = run_reference(parse_text_model(ints), {{"x", tensor<int64_t>({3}, {1, 2, 3})}});
  expect_tensor_near(yi["y"], {1, 1}, {321});
  const std::string soft = std::string(kHeader) + R"(g (float[2,2] x) => (float[2,2] y) {
  y = ai.onnx.ml.LinearRegressor<coefficients = [1.0, 2.0, -1.0, 0.5], intercepts = [0.5, -1.0],
      targets = 2, post_transform = "SOFTMAX">(x)
})";
  auto ys = run_and_match_onnxruntime(soft, {{"x", x2x2()}});
  expect_tensor_near(ys["y"], {2, 2},
                     {1 / (1 + std::exp(-6.5)), 1 / (1 + std::exp(6.5)), 1 / (1 + std::exp(-6.0)),
                      1 / (1 + std::exp(6.0))});
  auto err = run_op_error(std::string(kHeader) + R"(g (float[2,2] x) => (y) {
  y = ai.onnx.ml.LinearRegressor<coefficients = [1.0, 2.0, 3.0], targets = 2>(x)
})",
                          {{"x", x2x2()}});
  EXPECT_NE(err.find("2 targets of 2 features need 4"), std::string::npos) << err;
}

// ---- Normalizer, Scaler, Binarizer, Imputer -----------------------------------------------

TEST(MlNormalizer, MaxL1L2RowByRow) {
  const Tensor x = f32({3, 3}, {1, -2, 3, 0, 0, 0, -4, 1, 2});
  auto norm = [&](const std::string& n) {
    return run_and_match_onnxruntime(std::string(kHeader) + R"(g (float[3,3] x) => (float[3,3] y) {
  y = ai.onnx.ml.Normalizer<norm = ")" + n +
                                         R"(">(x) })",
                                     {{"x", x}})["y"];
  };
  // Zero rows are copied.
  expect_tensor_near(norm("MAX"), {3, 3}, {1.0 / 3, -2.0 / 3, 1, 0, 0, 0, -2, 0.5, 1});
  expect_tensor_near(norm("L1"), {3, 3},
                     {1.0 / 6, -2.0 / 6, 3.0 / 6, 0, 0, 0, -4.0 / 7, 1.0 / 7, 2.0 / 7});
  const double a = std::sqrt(14.0), b = std::sqrt(21.0);
  expect_tensor_near(norm("L2"), {3, 3}, {1 / a, -2 / a, 3 / a, 0, 0, 0, -4 / b, 1 / b, 2 / b});
}

TEST(MlScaler, PerFeatureAndBroadcast) {
  auto y = run_and_match_onnxruntime(std::string(kHeader) + R"(g (float[2,2] x) => (float[2,2] y) {
  y = ai.onnx.ml.Scaler<offset = [1.0, 2.0], scale = [2.0, 0.5]>(x) })",
                                     {{"x", f32({2, 2}, {1, 2, 3, 4})}});
  expect_tensor_near(y["y"], {2, 2}, {0, 0, 4, 1});
  auto yi = run_and_match_onnxruntime(std::string(kHeader) + R"(g (int32[3] x) => (float[3] y) {
  y = ai.onnx.ml.Scaler<offset = [1.0], scale = [-1.0]>(x) })",
                                      {{"x", tensor<int32_t>({3}, {1, 2, 3})}});
  expect_tensor_near(yi["y"], {3}, {0, -1, -2});
  auto err = run_op_error(std::string(kHeader) + R"(g (float[2,2] x) => (y) {
  y = ai.onnx.ml.Scaler<offset = [1.0, 2.0, 3.0], scale = [1.0]>(x) })",
                          {{"x", x2x2()}});
  EXPECT_NE(err.find("3 offset values for 2 features"), std::string::npos) << err;
}

TEST(MlBinarizer, GreaterThanThreshold) {
  auto y = run_and_match_onnxruntime(std::string(kHeader) + R"(g (float[4] x) => (float[4] y) {
  y = ai.onnx.ml.Binarizer<threshold = 1.5>(x) })",
                                     {{"x", f32({4}, {1, 1.5, 2, -3})}});
  expect_tensor_near(y["y"], {4}, {0, 0, 1, 0});
  // ONNX Runtime implements Binarizer for float input only.
  auto yi =
      run_reference(parse_text_model(std::string(kHeader) + R"(g (int64[3] x) => (int64[3] y) {
  y = ai.onnx.ml.Binarizer(x) })"),
                    {{"x", tensor<int64_t>({3}, {-1, 0, 7})}});
  EXPECT_EQ(values(yi["y"]), (std::vector<double>{0, 0, 1}));
}

TEST(MlImputer, ReplacesPerFeature) {
  auto y = run_and_match_onnxruntime(std::string(kHeader) + R"(g (float[2,2] x) => (float[2,2] y) {
  y = ai.onnx.ml.Imputer<imputed_value_floats = [10.0, 20.0], replaced_value_float = -1.0>(x) })",
                                     {{"x", f32({2, 2}, {-1, 5, 6, -1})}});
  expect_tensor_near(y["y"], {2, 2}, {10, 5, 6, 20});
  auto yi = run_and_match_onnxruntime(std::string(kHeader) + R"(g (int64[3] x) => (int64[3] y) {
  y = ai.onnx.ml.Imputer<imputed_value_int64s = [9], replaced_value_int64 = 0>(x) })",
                                      {{"x", tensor<int64_t>({3}, {0, 1, 0})}});
  EXPECT_EQ(values(yi["y"]), (std::vector<double>{9, 1, 9}));
}

// ---- ArrayFeatureExtractor, FeatureVectorizer, OneHotEncoder, CategoryMapper --------------

TEST(MlArrayFeatureExtractor, GathersAlongTheLastAxis) {
  auto z = run_and_match_onnxruntime(
      std::string(kHeader) + R"(g (float[2,3] x, int64[2] i) => (float[2,2] z) {
  z = ai.onnx.ml.ArrayFeatureExtractor(x, i) })",
      {{"x", f32({2, 3}, {1, 2, 3, 4, 5, 6})}, {"i", tensor<int64_t>({2}, {2, 0})}});
  expect_tensor_near(z["z"], {2, 2}, {3, 1, 6, 4});
  auto s = run_and_match_onnxruntime(
      std::string(kHeader) + R"(g (string[3] x, int64[1] i) => (string[1,1] z) {
  z = ai.onnx.ml.ArrayFeatureExtractor(x, i) })",
      {{"x", tensor<std::string>({3}, {"a", "b", "c"})}, {"i", tensor<int64_t>({1}, {1})}});
  EXPECT_EQ(shape_to_string(s["z"].shape()), "1x1");
  EXPECT_EQ(strings_of(s["z"]), std::vector<std::string>{"b"});
  auto err =
      run_op_error(std::string(kHeader) + R"(g (float[2,3] x, int64[1] i) => (z) {
  z = ai.onnx.ml.ArrayFeatureExtractor(x, i) })",
                   {{"x", f32({2, 3}, {1, 2, 3, 4, 5, 6})}, {"i", tensor<int64_t>({1}, {3})}});
  EXPECT_NE(err.find("index 3 is out of range for a last axis of size 3"), std::string::npos)
      << err;
}

TEST(MlFeatureVectorizer, ConcatenatesPadsAndCuts) {
  // Input a fills 3 columns (padded with 0), b 1 column (cut). The inputs share one type T1
  // (the schema's input is variadic and homogeneous; ONNX Runtime refuses mixed types).
  auto y = run_and_match_onnxruntime(
      std::string(kHeader) + R"(g (int64[2,2] a, int64[2,2] b) => (float[2,4] y) {
  y = ai.onnx.ml.FeatureVectorizer<inputdimensions = [3, 1]>(a, b) })",
      {{"a", tensor<int64_t>({2, 2}, {1, 2, 3, 4})}, {"b", tensor<int64_t>({2, 2}, {5, 6, 7, 8})}});
  expect_tensor_near(y["y"], {2, 4}, {1, 2, 0, 5, 3, 4, 0, 7});
}

TEST(MlOneHotEncoder, IntsStringsAndUnknowns) {
  auto y = run_and_match_onnxruntime(std::string(kHeader) + R"(g (int64[3] x) => (float[3,3] y) {
  y = ai.onnx.ml.OneHotEncoder<cats_int64s = [4, 2, 9]>(x) })",
                                     {{"x", tensor<int64_t>({3}, {2, 9, 5})}});
  expect_tensor_near(y["y"], {3, 3}, {0, 1, 0, 0, 0, 1, 0, 0, 0});
  auto s =
      run_and_match_onnxruntime(std::string(kHeader) + R"(g (string[1,2] x) => (float[1,2,2] y) {
  y = ai.onnx.ml.OneHotEncoder<cats_strings = ["cat", "dog"]>(x) })",
                                {{"x", tensor<std::string>({1, 2}, {"dog", "cat"})}});
  expect_tensor_near(s["y"], {1, 2, 2}, {0, 1, 1, 0});
  auto err = run_op_error(std::string(kHeader) + R"(g (int64[1] x) => (y) {
  y = ai.onnx.ml.OneHotEncoder<cats_int64s = [1], zeros = 0>(x) })",
                          {{"x", tensor<int64_t>({1}, {3})}});
  EXPECT_NE(err.find("category '3' is not in the category list"), std::string::npos) << err;
}

TEST(MlCategoryMapper, BothDirections) {
  const std::string attrs = R"(cats_int64s = [1, 2], cats_strings = ["one", "two"])";
  auto y = run_and_match_onnxruntime(
      std::string(kHeader) + "g (string[3] x) => (int64[3] y) {\n y = ai.onnx.ml.CategoryMapper<" +
          attrs + ", default_int64 = 42>(x) }",
      {{"x", tensor<std::string>({3}, {"two", "three", "one"})}});
  EXPECT_EQ(values(y["y"]), (std::vector<double>{2, 42, 1}));
  auto s = run_and_match_onnxruntime(
      std::string(kHeader) + "g (int64[2] x) => (string[2] y) {\n y = ai.onnx.ml.CategoryMapper<" +
          attrs + ">(x) }",
      {{"x", tensor<int64_t>({2}, {1, 5})}});
  EXPECT_EQ(strings_of(s["y"]), (std::vector<std::string>{"one", "_Unused"}));
}

// ---- LabelEncoder --------------------------------------------------------------------------

TEST(MlLabelEncoder, Version1IndexesClassesStrings) {
  const std::string h = R"(<ir_version: 8, opset_import: ["" : 17, "ai.onnx.ml" : 1]>
)";
  auto s = run_and_match_onnxruntime(h + R"(g (int64[3] x) => (string[3] y) {
  y = ai.onnx.ml.LabelEncoder<classes_strings = ["a", "b", "c"], default_string = "?">(x) })",
                                     {{"x", tensor<int64_t>({3}, {0, 2, 5})}});
  EXPECT_EQ(strings_of(s["y"]), (std::vector<std::string>{"a", "c", "?"}));
  auto i = run_and_match_onnxruntime(h + R"(g (string[2] x) => (int64[2] y) {
  y = ai.onnx.ml.LabelEncoder<classes_strings = ["a", "b", "c"], default_int64 = -7>(x) })",
                                     {{"x", tensor<std::string>({2}, {"c", "z"})}});
  EXPECT_EQ(values(i["y"]), (std::vector<double>{2, -7}));
}

TEST(MlLabelEncoder, Version2KeysAndValuesOfEveryType) {
  // The spec's example: ["Dori", "Amy", "Amy", "Sally", "Sally"] -> [-1, 5, 5, 6, 6].
  auto a = run_and_match_onnxruntime(
      std::string(kHeader) + R"(g (string[5] x) => (int64[5] y) {
  y = ai.onnx.ml.LabelEncoder<keys_strings = ["Amy", "Sally"], values_int64s = [5, 6]>(x) })",
      {{"x", tensor<std::string>({5}, {"Dori", "Amy", "Amy", "Sally", "Sally"})}});
  EXPECT_EQ(values(a["y"]), (std::vector<double>{-1, 5, 5, 6, 6}));
  auto b = run_and_match_onnxruntime(std::string(kHeader) + R"(g (int64[3] x) => (float[3] y) {
  y = ai.onnx.ml.LabelEncoder<keys_int64s = [1, 2], values_floats = [0.5, 1.5], default_float = 9.0>(x) })",
                                     {{"x", tensor<int64_t>({3}, {2, 3, 1})}});
  expect_tensor_near(b["y"], {3}, {1.5, 9, 0.5});
  auto c = run_and_match_onnxruntime(std::string(kHeader) + R"(g (float[3] x) => (string[3] y) {
  y = ai.onnx.ml.LabelEncoder<keys_floats = [0.5, 2.0], values_strings = ["half", "two"]>(x) })",
                                     {{"x", f32({3}, {2, 0.5, 1})}});
  EXPECT_EQ(strings_of(c["y"]), (std::vector<std::string>{"two", "half", "_Unused"}));
  auto err = run_op_error(std::string(kHeader) + R"(g (int64[1] x) => (y) {
  y = ai.onnx.ml.LabelEncoder<keys_int64s = [1, 2], values_int64s = [1]>(x) })",
                          {{"x", tensor<int64_t>({1}, {1})}});
  EXPECT_NE(err.find("2 keys but 1 values"), std::string::npos) << err;
  err = run_op_error(std::string(kHeader) + R"(g (float[1] x) => (y) {
  y = ai.onnx.ml.LabelEncoder<keys_int64s = [1], values_int64s = [1]>(x) })",
                     {{"x", f32({1}, {1})}});
  EXPECT_NE(err.find("int64 keys but a float32 input"), std::string::npos) << err;
}

// ---- Tree ensembles ------------------------------------------------------------------------

// Two trees over two features. Tree 0: x0 <= 0.5 ? leaf 1 : leaf 2. Tree 1: x1 < 2 ? leaf 1 :
// leaf 2.
const char* kTrees = R"(nodes_treeids = [0, 0, 0, 1, 1, 1], nodes_nodeids = [0, 1, 2, 0, 1, 2],
      nodes_featureids = [0, 0, 0, 1, 1, 1],
      nodes_modes = ["BRANCH_LEQ", "LEAF", "LEAF", "BRANCH_LT", "LEAF", "LEAF"],
      nodes_values = [0.5, 0.0, 0.0, 2.0, 0.0, 0.0],
      nodes_truenodeids = [1, 0, 0, 1, 0, 0], nodes_falsenodeids = [2, 0, 0, 2, 0, 0])";

// Leaf votes: tree 0 leaf 1 -> (t0 1, t1 -1), leaf 2 -> (t0 2); tree 1 leaf 1 -> (t0 10, t1 3),
// leaf 2 -> (t1 5).
std::string regressor(const std::string& extra) {
  return std::string(kHeader) +
         "g (float[2,2] x) => (float[2,2] y) {\n  y = ai.onnx.ml.TreeEnsembleRegressor<" + kTrees +
         R"(,
      n_targets = 2, target_treeids = [0, 0, 0, 1, 1, 1], target_nodeids = [1, 1, 2, 1, 1, 2],
      target_ids = [0, 1, 0, 0, 1, 1], target_weights = [1.0, -1.0, 2.0, 10.0, 3.0, 5.0])" +
         extra + ">(x)\n}";
}

// Row 0 reaches leaf 1 of both trees, row 1 leaf 2 of both.
Tensor tree_rows() { return f32({2, 2}, {0, 1, 1, 3}); }

TEST(MlTreeEnsembleRegressor, EveryAggregateFunction) {
  const std::map<std::string, std::vector<double>> expected = {
      {"SUM", {11, 2, 2, 5}},
      {"AVERAGE", {5.5, 1, 1, 2.5}},
      {"MIN", {1, -1, 2, 5}},
      {"MAX", {10, 3, 2, 5}},
  };
  for (const auto& [agg, y] : expected) {
    SCOPED_TRACE(agg);
    auto out = run_and_match_onnxruntime(regressor(", aggregate_function = \"" + agg + "\""),
                                         {{"x", tree_rows()}});
    expect_tensor_near(out["y"], {2, 2}, y);
  }
}

TEST(MlTreeEnsembleRegressor, BaseValuesPostTransformsAndMissingValues) {
  auto base =
      run_and_match_onnxruntime(regressor(", base_values = [100.0, 200.0]"), {{"x", tree_rows()}});
  expect_tensor_near(base["y"], {2, 2}, {111, 202, 102, 205});
  auto soft =
      run_and_match_onnxruntime(regressor(", post_transform = \"SOFTMAX\""), {{"x", tree_rows()}});
  expect_tensor_near(soft["y"], {2, 2}, {0.9998766, 0.0001233946, 0.04742587, 0.9525741}, 1e-6);
  auto logistic =
      run_and_match_onnxruntime(regressor(", post_transform = \"LOGISTIC\""), {{"x", tree_rows()}});
  expect_tensor_near(logistic["y"], {2, 2}, {0.9999833, 0.8807971, 0.8807971, 0.9933071}, 1e-6);
  // NaN takes the false branch unless nodes_missing_value_tracks_true says true.
  const Tensor nan_row = f32({2, 2}, {NAN, 1, NAN, 1});
  auto f = run_and_match_onnxruntime(regressor(""), {{"x", nan_row}});
  expect_tensor_near(f["y"], {2, 2}, {12, 3, 12, 3});
  auto t = run_and_match_onnxruntime(
      regressor(", nodes_missing_value_tracks_true = [1, 0, 0, 0, 0, 0]"), {{"x", nan_row}});
  expect_tensor_near(t["y"], {2, 2}, {11, 2, 11, 2});
}

TEST(MlTreeEnsembleRegressor, Version1AndDoubleThresholds) {
  const std::string v1 = replaced(regressor(""), "\"ai.onnx.ml\" : 3", "\"ai.onnx.ml\" : 1");
  auto out = run_and_match_onnxruntime(v1, {{"x", tree_rows()}});
  expect_tensor_near(out["y"], {2, 2}, {11, 2, 2, 5});
  // Thresholds as a double tensor (version 3, for double input: ONNX Runtime refuses it with
  // float input): 0.5 moved to 1.5 sends row 1 left in tree 0.
  const std::string v3 =
      replaced(replaced(regressor(""), "nodes_values = [0.5, 0.0, 0.0, 2.0, 0.0, 0.0]",
                        "nodes_values_as_tensor = double[6] {1.5, 0.0, 0.0, 2.0, 0.0, 0.0}"),
               "float[2,2] x", "double[2,2] x");
  auto d = run_and_match_onnxruntime(v3, {{"x", tensor<double>({2, 2}, {0, 1, 1, 3})}});
  expect_tensor_near(d["y"], {2, 2}, {11, 2, 1, 4});
}

TEST(MlTreeEnsembleRegressor, MalformedTreesNameTheNode) {
  std::string text = replaced(regressor(""), "nodes_truenodeids = [1, 0, 0, 1, 0, 0]",
                              "nodes_truenodeids = [1, 0, 0, 7, 0, 0]");
  auto err = run_op_error(text, {{"x", tree_rows()}});
  EXPECT_NE(err.find("node 0 of tree 1 branches to node 7, which the tree does not have"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("(TreeEnsembleRegressor)"), std::string::npos) << err;
  text = replaced(regressor(""), "nodes_featureids = [0, 0, 0, 1, 1, 1]",
                  "nodes_featureids = [0, 0, 0, 1, 1]");
  err = run_op_error(text, {{"x", tree_rows()}});
  EXPECT_NE(err.find("nodes_featureids has 5 entries but nodes_nodeids has 6"), std::string::npos)
      << err;
  text = replaced(regressor(""), "\"BRANCH_LT\"", "\"BRANCH_XX\"");
  err = run_op_error(text, {{"x", tree_rows()}});
  EXPECT_NE(err.find("'BRANCH_XX' is not a node mode"), std::string::npos) << err;
  err = run_op_error(replaced(regressor(""), "float[2,2] x", "float[2,F] x"),
                     {{"x", f32({2, 1}, {0, 1})}});
  EXPECT_NE(err.find("reads feature 1 but the input has 1 features"), std::string::npos) << err;
  err = run_op_error(regressor(", base_values = [1.0]"), {{"x", tree_rows()}});
  EXPECT_NE(err.find("1 base_values for 2 targets"), std::string::npos) << err;
}

// Three classes. Votes: tree 0 leaf 1 -> class 0 +1, leaf 2 -> class 1 +1; tree 1 leaf 1 ->
// class 2 +0.5, leaf 2 -> class 0 +0.25. Scores: row 0 [1, 0, 0.5], row 1 [0.25, 1, 0].
std::string classifier(const std::string& extra,
                       const std::string& labels = "classlabels_int64s = [7, 8, 9]") {
  return std::string(kHeader) + "g (float[2,2] x) => (" + label_type(labels) +
         " y, float[2,3] z) {\n  y, z = ai.onnx.ml.TreeEnsembleClassifier<" + kTrees + R"(,
      class_treeids = [0, 0, 1, 1], class_nodeids = [1, 2, 1, 2], class_ids = [0, 1, 2, 0],
      class_weights = [1.0, 1.0, 0.5, 0.25], )" +
         labels + extra + ">(x)\n}";
}

TEST(MlTreeEnsembleClassifier, MulticlassEveryPostTransform) {
  const std::map<std::string, std::vector<double>> expected = {
      {"NONE", {1.1, 0.2, 0.8, 0.35, 1.2, 0.3}},
      {"SOFTMAX", {0.4656821, 0.1893322, 0.3449858, 0.2330526, 0.5452609, 0.2216865}},
      {"LOGISTIC", {0.7502601, 0.549834, 0.6899745, 0.5866176, 0.7685248, 0.5744425}},
  };
  for (const auto& [transform, z] : expected) {
    SCOPED_TRACE(transform);
    auto out = run_and_match_onnxruntime(
        classifier(", base_values = [0.1, 0.2, 0.3], post_transform = \"" + transform + "\""),
        {{"x", tree_rows()}});
    EXPECT_EQ(values(out["y"]), (std::vector<double>{7, 8}));
    expect_tensor_near(out["z"], {2, 3}, z, 1e-6);
  }
  // SOFTMAX_ZERO leaves the zero scores (no base values) at 0.
  auto smz = run_and_match_onnxruntime(classifier(", post_transform = \"SOFTMAX_ZERO\""),
                                       {{"x", tree_rows()}});
  expect_tensor_near(smz["z"], {2, 3}, {0.6224593, 0, 0.3775407, 0.3208213, 0.6791787, 0}, 1e-6);
  // PROBIT on scores in (0, 1): both rows reach [1, 0, 0.5], plus base values -> [0.7, 0.2, 0.1].
  auto probit = run_and_match_onnxruntime(
      classifier(", base_values = [-0.3, 0.2, -0.4], post_transform = \"PROBIT\""),
      {{"x", f32({2, 2}, {0, 1, 0, 1})}}, 1e-5, 1e-4);
  EXPECT_EQ(values(probit["y"]), (std::vector<double>{7, 7}));
  expect_tensor_near(probit["z"], {2, 3},
                     {0.5244457, -0.8417559, -1.281713, 0.5244457, -0.8417559, -1.281713}, 1e-5);
}

TEST(MlTreeEnsembleClassifier, StringLabels) {
  auto out = run_and_match_onnxruntime(
      classifier("", R"(classlabels_strings = ["cat", "dog", "emu"])"), {{"x", tree_rows()}});
  EXPECT_EQ(strings_of(out["y"]), (std::vector<std::string>{"cat", "dog"}));
  expect_tensor_near(out["z"], {2, 3}, {1, 0, 0.5, 0.25, 1, 0});
}

// Binary, all votes for class 0 with mixed signs (a boosted model's margin): tree 0 leaf 1 -1,
// leaf 2 +2; tree 1 leaf 1 +0.5, leaf 2 -0.25. Margins: row 0 -0.5, row 1 1.75.
std::string binary_margin(const std::string& transform) {
  return std::string(kHeader) +
         "g (float[2,2] x) => (int64[2] y, float[2,2] z) {\n  y, z = "
         "ai.onnx.ml.TreeEnsembleClassifier<" +
         kTrees + R"(,
      class_treeids = [0, 0, 1, 1], class_nodeids = [1, 2, 1, 2], class_ids = [0, 0, 0, 0],
      class_weights = [-1.0, 2.0, 0.5, -0.25], classlabels_int64s = [0, 1],
      post_transform = ")" +
         transform + "\">(x)\n}";
}

TEST(MlTreeEnsembleClassifier, BinaryMarginLogisticAndNone) {
  auto lg = run_and_match_onnxruntime(binary_margin("LOGISTIC"), {{"x", tree_rows()}});
  EXPECT_EQ(values(lg["y"]), (std::vector<double>{0, 1}));
  expect_tensor_near(lg["z"], {2, 2}, {0.6224593, 0.3775407, 0.1480472, 0.8519528}, 1e-6);
  auto none = run_and_match_onnxruntime(binary_margin("NONE"), {{"x", tree_rows()}});
  EXPECT_EQ(values(none["y"]), (std::vector<double>{0, 1}));
  expect_tensor_near(none["z"], {2, 2}, {0.5, -0.5, -1.75, 1.75});
}

TEST(MlTreeEnsembleClassifier, BinaryProbabilitiesForBothClasses) {
  // A random forest's leaves hold both class probabilities: row 0 [0.7, 0.3], row 1 [0.15, 0.85].
  const std::string text = std::string(kHeader) +
                           "g (float[2,2] x) => (int64[2] y, float[2,2] z) {\n  y, z = "
                           "ai.onnx.ml.TreeEnsembleClassifier<" +
                           kTrees + R"(,
      class_treeids = [0, 0, 0, 0, 1, 1, 1, 1], class_nodeids = [1, 1, 2, 2, 1, 1, 2, 2],
      class_ids = [0, 1, 0, 1, 0, 1, 0, 1],
      class_weights = [0.4, 0.1, 0.05, 0.45, 0.3, 0.2, 0.1, 0.4], classlabels_int64s = [3, 5]>(x)
})";
  // Y is the label of the higher probability. ONNX Runtime 1.29 disagrees here: it answers
  // [1, 1], which is not even one of the labels (its binary path returns a fixed 1/0 when both
  // classes have votes), so only Z is compared with it.
  auto out = run_and_match_onnxruntime(text, {{"x", tree_rows()}}, 1e-5, 1e-5, "y");
  EXPECT_EQ(values(out["y"]), (std::vector<double>{3, 5}));
  expect_tensor_near(out["z"], {2, 2}, {0.7, 0.3, 0.15, 0.85});
}

// ---- ZipMap --------------------------------------------------------------------------------

TEST(MlZipMap, RowsBecomeASequenceOfMaps) {
  auto m = parse_text_model(std::string(kHeader) + R"(g (float[2,2] x) => (z) {
  z = ai.onnx.ml.ZipMap<classlabels_int64s = [10, 20]>(x) })");
  auto out = run_reference_values(m, {{"x", f32({2, 2}, {0.1f, 0.9f, 0.6f, 0.4f})}});
  ASSERT_TRUE(out["z"].is_sequence());
  const Sequence& s = out["z"].sequence();
  ASSERT_TRUE(s.holds_maps());
  EXPECT_EQ(s.map_key_type, DType::kInt64);
  ASSERT_EQ(s.maps.size(), 2u);
  EXPECT_EQ(values(s.maps[1].keys), (std::vector<double>{10, 20}));
  expect_tensor_near(s.maps[1].values, {2}, {0.6, 0.4});
  EXPECT_EQ(out["z"].describe(), "sequence of 2 maps (int64 to float32)");

  auto ms = parse_text_model(std::string(kHeader) + R"(g (float[3] x) => (z) {
  z = ai.onnx.ml.ZipMap<classlabels_strings = ["a", "b", "c"]>(x) })");
  auto outs = run_reference_values(ms, {{"x", f32({3}, {1, 2, 3})}});
  const Sequence& ss = outs["z"].sequence();
  ASSERT_EQ(ss.maps.size(), 1u);
  EXPECT_EQ(strings_of(ss.maps[0].keys), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(Value(ss.maps[0]).describe(), "map of 3 entries (string to float32)");

  // Tensor-only callers and kernels refuse maps with a sentence that says so.
  auto err = run_reference_error(m, {{"x", f32({2, 2}, {0.1f, 0.9f, 0.6f, 0.4f})}});
  EXPECT_NE(err.find("graph output 'z' is a sequence"), std::string::npos) << err;
  auto len = parse_text_model(std::string(kHeader) + R"(g (float[2,2] x) => (int64[] n) {
  z = ai.onnx.ml.ZipMap<classlabels_int64s = [10, 20]>(x)
  n = SequenceLength(z) })");
  err = run_reference_error(len, {{"x", f32({2, 2}, {0.1f, 0.9f, 0.6f, 0.4f})}});
  EXPECT_NE(err.find("expects a sequence of tensors as input 0, got a sequence of 2 maps"),
            std::string::npos)
      << err;
  auto bad = parse_text_model(std::string(kHeader) + R"(g (float[2,3] x) => (z) {
  z = ai.onnx.ml.ZipMap<classlabels_int64s = [10, 20]>(x) })");
  err = run_reference_values_error(bad, {{"x", f32({2, 3}, {1, 2, 3, 4, 5, 6})}});
  EXPECT_NE(err.find("2 class labels for an input of 3 columns"), std::string::npos) << err;
}

TEST(MlZipMap, OnnxRuntimeBackendRefusesMapsClearly) {
  // ONNX Runtime computes ZipMap, but onnxdbg's worker protocol exchanges tensors only: the
  // output is refused by name rather than misread.
  ModelDir dir;
  auto m = parse_text_model(std::string(kHeader) + R"(g (float[2,2] x) => (float[2,2] p, z) {
  p = Identity(x)
  z = ai.onnx.ml.ZipMap<classlabels_int64s = [10, 20]>(x) })");
  declare_type(m, "z", "seq(map(int64, float[]))");
  const auto path = dir.path() / "zipmap.onnx";
  ASSERT_TRUE(save_model(m, path).is_ok());
  auto backend = create_backend(BackendSpec{"onnxruntime", {}});
  ASSERT_TRUE(backend.has_value());
  auto session = (*backend)->load(path);
  ASSERT_TRUE(session.has_value()) << session.status().to_string();
  auto out = (*session)->run({{"x", f32({2, 2}, {0.1f, 0.9f, 0.6f, 0.4f})}});
  ASSERT_FALSE(out.has_value());
  EXPECT_NE(out.status().to_string().find("'z' is not a tensor"), std::string::npos)
      << out.status().to_string();
}

// ---- Domains -------------------------------------------------------------------------------

TEST(MlDomain, KernelsAreKeyedByDomain) {
  // Scaler exists in ai.onnx.ml only, Relu in the default domain only: neither resolves across.
  auto m = parse_text_model(R"(<ir_version: 8, opset_import: ["" : 17, "ai.onnx.ml" : 3]>
g (float[2] x) => (float[2] y, float[2] z) {
  y = Scaler<offset = [1.0], scale = [1.0]>(x)
  z = ai.onnx.ml.Relu(x) })");
  const auto missing = reference::find_missing_kernels(m);
  ASSERT_EQ(missing.size(), 2u);
  EXPECT_EQ(missing[0].to_string(), "Scaler at opset 17");
  EXPECT_EQ(missing[1].to_string(), "Relu (domain ai.onnx.ml) at opset 3");
  // Without an ai.onnx.ml import the ml ops have no opset, hence no kernel.
  auto no_import = parse_text_model(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[2] x) => (float[2] y) { y = ai.onnx.ml.Scaler<offset = [1.0], scale = [1.0]>(x) })");
  ASSERT_EQ(reference::find_missing_kernels(no_import).size(), 1u);
  const auto& reg = reference::KernelRegistry::global();
  EXPECT_NE(reg.find("ai.onnx.ml", "TreeEnsembleClassifier", 3), nullptr);
  EXPECT_EQ(reg.find("", "TreeEnsembleClassifier", 17), nullptr);
  EXPECT_EQ(reg.find("ai.onnx.ml", "TreeEnsembleClassifier", 0), nullptr);
  EXPECT_EQ(reg.find("ai.onnx.ml", "LabelEncoder", 1)->since_version, 1);
  EXPECT_EQ(reg.find("ai.onnx.ml", "LabelEncoder", 3)->since_version, 2);
}

TEST(MlLabelEncoder, Version4TensorAttributes) {
  const std::string h = R"(<ir_version: 8, opset_import: ["" : 17, "ai.onnx.ml" : 4]>
)";
  auto a = run_op(h + R"(g (int64[3] x) => (float[3] y) {
  y = ai.onnx.ml.LabelEncoder<keys_tensor = int64[2] {1, 2}, values_tensor = float[2] {0.5, 1.5}, default_tensor = float[1] {9.0}>(x) })",
                  {{"x", tensor<int64_t>({3}, {2, 3, 1})}}, "y");
  expect_tensor_near(a, {3}, {1.5, 9, 0.5});
  // Without default_tensor an integer value type defaults to -1.
  auto b = run_op(h + R"(g (string[2] x) => (int32[2] y) {
  y = ai.onnx.ml.LabelEncoder<keys_strings = ["a"], values_tensor = int32[1] {7}>(x) })",
                  {{"x", tensor<std::string>({2}, {"a", "b"})}}, "y");
  ASSERT_EQ(b.dtype(), DType::kInt32);
  EXPECT_EQ(values(b), (std::vector<double>{7, -1}));
  auto err = run_op_error(h + R"(g (int64[1] x) => (y) {
  y = ai.onnx.ml.LabelEncoder<keys_tensor = int64[1] {1}, keys_int64s = [1], values_int64s = [2]>(x) })",
                          {{"x", tensor<int64_t>({1}, {1})}});
  EXPECT_NE(err.find("has both keys_tensor and keys_int64s"), std::string::npos) << err;
}

TEST(MlTreeEnsemble, Version5BranchesMembershipAndAggregates) {
  // One tree: node 0 sends x <= 0.5 to leaf 0 (target 0, weight 1), else to node 1, which sends
  // members of {2, 3} to leaf 1 (target 1, weight 10) and the rest (NaN too) to leaf 2 (target 1,
  // weight 100).
  auto run = [](int aggregate) {
    return run_op(
        R"(<ir_version: 8, opset_import: ["" : 21, "ai.onnx.ml" : 5]>
g (float[4,1] x) => (float[4,2] y) {
  y = ai.onnx.ml.TreeEnsemble<n_targets = 2, aggregate_function = )" +
            std::to_string(aggregate) +
            R"(, tree_roots = [0], nodes_featureids = [0, 0], nodes_modes = uint8[2] {0, 6}, nodes_splits = float[2] {0.5, 0.0}, nodes_truenodeids = [0, 1], nodes_trueleafs = [1, 1], nodes_falsenodeids = [1, 2], nodes_falseleafs = [0, 1], membership_values = float[2] {2.0, 3.0}, leaf_targetids = [0, 1, 1], leaf_weights = float[3] {1.0, 10.0, 100.0}>(x) })",
        {{"x", f32({4, 1}, {0, 2, 5, std::nanf("")})}}, "y");
  };
  expect_tensor_near(run(1), {4, 2}, {1, 0, 0, 10, 0, 100, 0, 100});
  // MIN: targets no leaf reaches keep the largest float.
  const double big = std::numeric_limits<float>::max();
  expect_tensor_near(run(2), {4, 2}, {1, big, big, 10, big, 100, big, 100});
  auto err = run_op_error(R"(<ir_version: 8, opset_import: ["" : 21, "ai.onnx.ml" : 5]>
g (float[1,1] x) => (y) {
  y = ai.onnx.ml.TreeEnsemble<n_targets = 1, tree_roots = [0], nodes_featureids = [3], nodes_modes = uint8[1] {0}, nodes_splits = float[1] {0.5}, nodes_truenodeids = [0], nodes_trueleafs = [1], nodes_falsenodeids = [0], nodes_falseleafs = [1], leaf_targetids = [0], leaf_weights = float[1] {1.0}>(x) })",
                          {{"x", f32({1, 1}, {0})}});
  EXPECT_NE(err.find("node 0 reads feature 3 but the input has 1 features"), std::string::npos)
      << err;
}

}  // namespace
}  // namespace onnxdbg::testing
