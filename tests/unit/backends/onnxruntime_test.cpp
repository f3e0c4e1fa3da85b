// The ONNX Runtime backend through the worker: values, every supported element type both ways,
// sequences and optionals in and out (run_values), options (opt, threads, providers,
// optimized_model), provider truth (requested vs used, node placement) and ORT's own error
// messages.
#include <set>

#include "backend_test_util.h"

namespace onnxdbg {
namespace {

using testing::isolated;
using testing::ModelDir;

const char* kGemmReluModel = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1,3] x) => (float[1,2] y)
<float[3,2] w = {1.0, 2.0, 3.0, 4.0, 5.0, 6.0}, float[2] b = {0.5, -100.0}>
{
  m = MatMul(x, w)
  a = Add(m, b)
  y = Relu(a)
}
)";

TEST(OnnxRuntime, ComputesKnownValues) {
  ModelDir dir;
  auto session = isolated("onnxruntime")->load(dir.write_model(kGemmReluModel));
  ASSERT_TRUE(session.has_value()) << session.status().to_string();
  EXPECT_EQ((*session)->info().output_names, std::vector<std::string>{"y"});
  auto providers = (*session)->info().providers;
  EXPECT_NE(std::find(providers.begin(), providers.end(), "CPUExecutionProvider"), providers.end());
  auto out = (*session)->run({{"x", Tensor::from_vector<float>({1, 3}, {1, 1, 1})}});
  ASSERT_TRUE(out.has_value()) << out.status().to_string();
  testing::expect_tensor_near(out->outputs.at("y"), {1, 2}, {9.5, 0});
}

TEST(OnnxRuntime, EveryElementTypeRoundTrips) {
  ModelDir dir;
  const auto model = dir.write_model(R"(
<ir_version: 8, opset_import: ["" : 17]>
ident (double[2] a, float16[2] b, bfloat16[2] c, int8[2] d, int16[2] e, int32[2] f, int64[2] g,
       uint8[2] h, uint16[2] i, uint32[2] j, uint64[2] k, bool[2] l, string[2] m, float[] s)
   => (double[2] a2, float16[2] b2, bfloat16[2] c2, int8[2] d2, int16[2] e2, int32[2] f2,
       int64[2] g2, uint8[2] h2, uint16[2] i2, uint32[2] j2, uint64[2] k2, bool[2] l2,
       string[2] m2, float[] s2) {
  a2 = Identity(a)
  b2 = Identity(b)
  c2 = Identity(c)
  d2 = Identity(d)
  e2 = Identity(e)
  f2 = Identity(f)
  g2 = Identity(g)
  h2 = Identity(h)
  i2 = Identity(i)
  j2 = Identity(j)
  k2 = Identity(k)
  l2 = Identity(l)
  m2 = Identity(m)
  s2 = Identity(s)
}
)");
  TensorMap in = {
      {"a", Tensor::from_vector<double>({2}, {1.5, -1e300})},
      {"b", Tensor::from_vector<Float16>({2}, {Float16(0.5f), Float16(-2.0f)})},
      {"c", Tensor::from_vector<BFloat16>({2}, {BFloat16(3.0f), BFloat16(-1e30f)})},
      {"d", Tensor::from_vector<int8_t>({2}, {-128, 127})},
      {"e", Tensor::from_vector<int16_t>({2}, {-32768, 32767})},
      {"f", Tensor::from_vector<int32_t>({2}, {-7, 1 << 30})},
      {"g", Tensor::from_vector<int64_t>({2}, {int64_t{1} << 62, -3})},
      {"h", Tensor::from_vector<uint8_t>({2}, {0, 255})},
      {"i", Tensor::from_vector<uint16_t>({2}, {1, 65535})},
      {"j", Tensor::from_vector<uint32_t>({2}, {2, 4000000000u})},
      {"k", Tensor::from_vector<uint64_t>({2}, {3, uint64_t{1} << 63})},
      {"l", Tensor::from_vector<bool>({2}, {true, false})},
      {"m", Tensor::from_vector<std::string>({2}, {"hello", ""})},
      {"s", Tensor::scalar<float>(42.0f)},
  };
  auto session = isolated("onnxruntime")->load(model);
  ASSERT_TRUE(session.has_value()) << session.status().to_string();
  auto out = (*session)->run(in);
  ASSERT_TRUE(out.has_value()) << out.status().to_string();
  ASSERT_EQ(out->outputs.size(), in.size());
  for (const auto& [name, t] : in) {
    const Tensor& got = out->outputs.at(name + "2");
    EXPECT_EQ(got.dtype(), t.dtype()) << name;
    EXPECT_EQ(got.shape(), t.shape()) << name;
    if (t.dtype() == DType::kString) {
      EXPECT_EQ(got.strings(), t.strings());
    } else {
      ASSERT_EQ(got.nbytes(), t.nbytes()) << name;
      EXPECT_EQ(std::memcmp(got.raw(), t.raw(), t.nbytes()), 0) << name;
    }
  }
}

TEST(OnnxRuntime, AcceptsOptAndThreads) {
  ModelDir dir;
  const auto model = dir.write_model(kGemmReluModel);
  for (const char* opt : {"disabled", "basic", "extended", "all"}) {
    auto session = isolated("onnxruntime", {{"opt", opt}, {"threads", "1"}, {"providers", "cpu"}})
                       ->load(model);
    ASSERT_TRUE(session.has_value()) << opt << ": " << session.status().to_string();
    EXPECT_TRUE((*session)->info().warnings.empty());
    auto out = (*session)->run({{"x", Tensor::from_vector<float>({1, 3}, {1, 0, 0})}});
    ASSERT_TRUE(out.has_value()) << out.status().to_string();
    testing::expect_tensor_near(out->outputs.at("y"), {1, 2}, {1.5, 0});
  }
}

TEST(OnnxRuntime, RefusesBadOptionValues) {
  ModelDir dir;
  const auto model = dir.write_model(kGemmReluModel);
  auto bad_opt = isolated("onnxruntime", {{"opt", "max"}})->load(model);
  ASSERT_FALSE(bad_opt.has_value());
  EXPECT_EQ(bad_opt.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(bad_opt.status().message().find("disabled, basic, extended or all"), std::string::npos);
  auto bad_threads = isolated("onnxruntime", {{"threads", "two"}})->load(model);
  ASSERT_FALSE(bad_threads.has_value());
  EXPECT_EQ(bad_threads.status().code(), ErrorCode::kInvalidArgument);
}

TEST(OnnxRuntime, MissingProviderIsAWarningAndNodesRunOnCpu) {
  // The case users hit: they asked for CUDA (or OpenVINO, TensorRT), this ONNX Runtime has only
  // the CPU provider, and every node silently ran there.
  ModelDir dir;
  const auto model = dir.write_model(kGemmReluModel);
  for (const char* asked : {"cuda+cpu", "cuda,cpu", "openvino", "tensorrt+cuda"}) {
    auto session = isolated("onnxruntime", {{"providers", asked}})->load(model);
    ASSERT_TRUE(session.has_value()) << asked << ": " << session.status().to_string();
    const SessionInfo& info = (*session)->info();
    EXPECT_EQ(info.providers, std::vector<std::string>{"CPUExecutionProvider"}) << asked;
    ASSERT_FALSE(info.provider_warnings.empty()) << asked;
    const std::string& w = info.provider_warnings.front();
    EXPECT_NE(w.find("was requested but this ONNX Runtime build does not have it"),
              std::string::npos)
        << w;
    EXPECT_NE(w.find("nodes ran on CPUExecutionProvider"), std::string::npos) << w;
    for (const auto& pw : info.provider_warnings) {
      EXPECT_NE(std::find(info.warnings.begin(), info.warnings.end(), pw), info.warnings.end());
    }
    ASSERT_EQ(info.provider_node_counts.size(), 1u);
    EXPECT_EQ(info.provider_node_counts.begin()->first, "CPUExecutionProvider");
    EXPECT_EQ(info.provider_node_counts.begin()->second,
              static_cast<int64_t>(info.node_placement.size()));
    // The session still runs, on the CPU.
    auto out = (*session)->run({{"x", Tensor::from_vector<float>({1, 3}, {1, 1, 1})}});
    ASSERT_TRUE(out.has_value()) << out.status().to_string();
    testing::expect_tensor_near(out->outputs.at("y"), {1, 2}, {9.5, 0});
  }
  auto two = isolated("onnxruntime", {{"providers", "tensorrt+cuda+cpu"}})->load(model);
  ASSERT_TRUE(two.has_value()) << two.status().to_string();
  EXPECT_EQ((*two)->info().providers_requested,
            (std::vector<std::string>{"TensorrtExecutionProvider", "CUDAExecutionProvider",
                                      "CPUExecutionProvider"}));
  EXPECT_EQ((*two)->info().provider_warnings.size(), 2u);
}

TEST(OnnxRuntime, ListsWhichNodeRanOnWhichProvider) {
  ModelDir dir;
  auto session = isolated("onnxruntime", {{"providers", "cpu"}, {"opt", "disabled"}})
                     ->load(dir.write_model(kGemmReluModel));
  ASSERT_TRUE(session.has_value()) << session.status().to_string();
  const SessionInfo& info = (*session)->info();
  EXPECT_TRUE(info.provider_warnings.empty());
  EXPECT_EQ(info.providers_requested, std::vector<std::string>{"CPUExecutionProvider"});
  std::multiset<std::string> ops;
  for (const auto& p : info.node_placement) {
    EXPECT_EQ(p.provider, "CPUExecutionProvider") << p.node;
    ops.insert(p.op_type);
  }
  EXPECT_EQ(ops, (std::multiset<std::string>{"Add", "MatMul", "Relu"}));
}

TEST(OnnxRuntime, UnknownProviderNameIsRefused) {
  ModelDir dir;
  auto session =
      isolated("onnxruntime", {{"providers", "cdua"}})->load(dir.write_model(kGemmReluModel));
  ASSERT_FALSE(session.has_value());
  EXPECT_EQ(session.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(session.status().message().find("unknown execution provider 'cdua'"), std::string::npos)
      << session.status().message();
}

TEST(OnnxRuntime, AcceptsFullProviderNames) {
  ModelDir dir;
  auto session = isolated("onnxruntime", {{"providers", "CPUExecutionProvider"}})
                     ->load(dir.write_model(kGemmReluModel));
  ASSERT_TRUE(session.has_value()) << session.status().to_string();
  EXPECT_EQ((*session)->info().providers, std::vector<std::string>{"CPUExecutionProvider"});
}

TEST(OnnxRuntime, RejectedModelGivesOrtsMessage) {
  ModelDir dir;
  const auto model = dir.write_model(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2] x) => (float[2] y) {
  y = NoSuchOp(x)
}
)");
  auto session = isolated("onnxruntime")->load(model);
  ASSERT_FALSE(session.has_value());
  EXPECT_EQ(session.status().code(), ErrorCode::kBackendError);
  const std::string& msg = session.status().message();
  EXPECT_EQ(msg.rfind("ONNX Runtime: ", 0), 0u) << msg;
  EXPECT_NE(msg.find("NoSuchOp"), std::string::npos) << msg;
}

TEST(OnnxRuntime, BadInputsAreInvalidArguments) {
  ModelDir dir;
  auto session = isolated("onnxruntime")->load(dir.write_model(kGemmReluModel));
  ASSERT_TRUE(session.has_value()) << session.status().to_string();
  auto missing = (*session)->run({});
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(missing.status().message().find("missing input 'x'"), std::string::npos);
  auto wrong_shape = (*session)->run({{"x", Tensor::from_vector<float>({1, 2}, {1, 1})}});
  ASSERT_FALSE(wrong_shape.has_value());
  EXPECT_EQ(wrong_shape.status().code(), ErrorCode::kInvalidArgument)
      << wrong_shape.status().to_string();
  // The session survives a refused run.
  auto ok = (*session)->run({{"x", Tensor::from_vector<float>({1, 3}, {1, 1, 1})}});
  ASSERT_TRUE(ok.has_value()) << ok.status().to_string();
}

// A model with sequence and optional inputs and outputs. ONNX's text parser cannot write
// seq(...) or optional(...) in a graph signature, so those are declared after parsing.
std::filesystem::path write_sequence_optional_model(const ModelDir& dir) {
  onnx::ModelProto m = testing::parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 18]>
g (s, float[2] x, o) => (grown, float[N] first, int64 n, bool has, same_o, opt_grown) {
  grown = SequenceInsert(s, x)
  zero = Constant<value = int64 {0}>()
  first = SequenceAt(s, zero)
  n = SequenceLength(grown)
  has = OptionalHasElement(o)
  same_o = Identity(o)
  opt_grown = Optional(grown)
}
)");
  testing::declare_type(m, "s", "seq(float[])");
  testing::declare_type(m, "o", "optional(float[])");
  testing::declare_type(m, "grown", "seq(float[])");
  testing::declare_type(m, "same_o", "optional(float[])");
  testing::declare_type(m, "opt_grown", "optional(seq(float[]))");
  const auto path = dir.path() / "seq_opt.onnx";
  const Status st = save_model(m, path);
  EXPECT_TRUE(st.is_ok()) << st.to_string();
  return path;
}

void expect_float_sequence(const Value& v, const std::vector<std::vector<double>>& elems) {
  ASSERT_TRUE(v.is_sequence()) << v.describe();
  EXPECT_EQ(v.sequence().elem_type, DType::kFloat);
  ASSERT_EQ(v.sequence().tensors.size(), elems.size()) << v.describe();
  for (size_t i = 0; i < elems.size(); ++i)
    testing::expect_tensor_near(v.sequence().tensors[i], {static_cast<int64_t>(elems[i].size())},
                                elems[i]);
}

TEST(OnnxRuntime, SequencesAndOptionalsCrossTheWorker) {
  ModelDir dir;
  auto session = isolated("onnxruntime")->load(write_sequence_optional_model(dir));
  ASSERT_TRUE(session.has_value()) << session.status().to_string();
  const Value s = testing::sequence_of(DType::kFloat, {Tensor::from_vector<float>({2}, {1, 2}),
                                                       Tensor::from_vector<float>({1}, {3})});
  const Tensor x = Tensor::from_vector<float>({2}, {5, 6});

  auto full = (*session)->run_values(
      {{"s", s}, {"x", x}, {"o", Value::optional_of(Tensor::from_vector<float>({1}, {7}))}});
  ASSERT_TRUE(full.has_value()) << full.status().to_string();
  expect_float_sequence(full->outputs.at("grown"), {{1, 2}, {3}, {5, 6}});
  testing::expect_tensor_near(full->outputs.at("first").tensor(), {2}, {1, 2});
  testing::expect_tensor_near(full->outputs.at("n").tensor(), {}, {3});
  testing::expect_tensor_near(full->outputs.at("has").tensor(), {}, {1});
  const Value& same_o = full->outputs.at("same_o");
  ASSERT_TRUE(same_o.has_element()) << same_o.describe();
  testing::expect_tensor_near(same_o.element().tensor(), {1}, {7});
  const Value& opt_grown = full->outputs.at("opt_grown");
  ASSERT_TRUE(opt_grown.has_element()) << opt_grown.describe();
  expect_float_sequence(opt_grown.element(), {{1, 2}, {3}, {5, 6}});

  // An optional holding nothing, given as such or left out, reaches ORT as an omitted input.
  for (const bool given : {true, false}) {
    ValueMap inputs = {{"s", s}, {"x", x}};
    if (given) inputs.emplace("o", Value::none());
    auto none = (*session)->run_values(inputs);
    ASSERT_TRUE(none.has_value()) << none.status().to_string();
    testing::expect_tensor_near(none->outputs.at("has").tensor(), {}, {0});
    EXPECT_TRUE(none->outputs.at("same_o").is_optional());
    EXPECT_FALSE(none->outputs.at("same_o").has_element());
    expect_float_sequence(none->outputs.at("grown"), {{1, 2}, {3}, {5, 6}});
  }

  // ORT's API cannot make an empty sequence: unsupported, saying why; the session survives.
  auto empty = (*session)->run_values(
      {{"s", testing::sequence_of(DType::kFloat, {})}, {"x", x}, {"o", Value::none()}});
  ASSERT_FALSE(empty.has_value());
  EXPECT_EQ(empty.status().code(), ErrorCode::kUnsupported);
  EXPECT_NE(empty.status().message().find("empty sequence"), std::string::npos)
      << empty.status().to_string();
  auto again = (*session)->run_values({{"s", s}, {"x", x}});
  EXPECT_TRUE(again.has_value()) << again.status().to_string();
}

TEST(OnnxRuntime, RunValuesWithTensorsOnlyMatchesRun) {
  ModelDir dir;
  auto session = isolated("onnxruntime")->load(dir.write_model(kGemmReluModel));
  ASSERT_TRUE(session.has_value()) << session.status().to_string();
  auto out = (*session)->run_values({{"x", Tensor::from_vector<float>({1, 3}, {1, 1, 1})}});
  ASSERT_TRUE(out.has_value()) << out.status().to_string();
  testing::expect_tensor_near(out->outputs.at("y").tensor(), {1, 2}, {9.5, 0});
  auto missing = (*session)->run_values({});
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.status().code(), ErrorCode::kInvalidArgument);
}

TEST(OnnxRuntime, SavesTheOptimizedModel) {
  ModelDir dir;
  const auto optimized = dir.path() / "optimized.onnx";
  auto session =
      isolated("onnxruntime", {{"optimized_model", optimized.string()}, {"opt", "basic"}})
          ->load(dir.write_model(kGemmReluModel));
  ASSERT_TRUE(session.has_value()) << session.status().to_string();
  auto saved = load_model(optimized);
  ASSERT_TRUE(saved.has_value()) << saved.status().to_string();
  EXPECT_GT(saved->proto.graph().node_size(), 0);
}

TEST(OnnxRuntime, UnknownOptionIsAWarning) {
  ModelDir dir;
  auto session =
      isolated("onnxruntime", {{"colour", "blue"}})->load(dir.write_model(kGemmReluModel));
  ASSERT_TRUE(session.has_value()) << session.status().to_string();
  ASSERT_EQ((*session)->info().warnings.size(), 1u);
  EXPECT_NE((*session)->info().warnings[0].find("colour"), std::string::npos);
}

TEST(OnnxRuntime, AnOpsetOrIrNewerThanItSupportsIsUnsupportedInOneSentence) {
  ModelDir dir;
  auto session = isolated("onnxruntime")->load(dir.write_model(R"(
<ir_version: 10, opset_import: ["" : 28]>
g (float[2] x) => (float[2] y) { y = Relu(x) }
)"));
  ASSERT_FALSE(session.has_value());
  EXPECT_EQ(session.status().code(), ErrorCode::kUnsupported);
  const std::string msg = session.status().message();
  // ONNX Runtime 1.29 runs ai.onnx up to opset 26.
  EXPECT_NE(msg.find("runs domain ai.onnx up to opset "), std::string::npos) << msg;
  EXPECT_NE(msg.find(" only, and this model imports opset 28"), std::string::npos) << msg;
  EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;

  auto newer_ir = isolated("onnxruntime")
                      ->load(dir.write_model(R"(
<ir_version: 15, opset_import: ["" : 17]>
g (float[2] x) => (float[2] y) { y = Relu(x) }
)",
                                             "ir15.onnx"));
  ASSERT_FALSE(newer_ir.has_value());
  EXPECT_EQ(newer_ir.status().code(), ErrorCode::kUnsupported);
  EXPECT_NE(newer_ir.status().message().find(" only, and this model has IR version 15"),
            std::string::npos)
      << newer_ir.status().message();
}

}  // namespace
}  // namespace onnxdbg
