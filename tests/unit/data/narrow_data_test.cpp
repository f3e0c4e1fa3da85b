// The ONNX narrow element types (float8, float4, float6, int4/uint4, int2/uint2) and bfloat16 in
// every data format: .npy/.npz under ml_dtypes' names (tests/fixtures/ml_dtypes_*.np[yz] were
// written with numpy 1.24 and ml_dtypes 0.5.1), Polygraphy JSON, test-data folders, samples.
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>

#include "../test_util.h"
#include "data/npy.h"
#include "data/npz.h"
#include "data/polygraphy_json.h"
#include "data/samples.h"
#include "data/test_data.h"

namespace onnxdbg {
namespace {

using testing::npy_with_header;

namespace fs = std::filesystem;

const fs::path kNarrowDataFixtures = fs::path(ONNXDBG_SOURCE_DIR) / "tests" / "fixtures";

const DType kNarrow[] = {DType::kFloat8E4M3FN,   DType::kFloat8E4M3FNUZ, DType::kFloat8E5M2,
                         DType::kFloat8E5M2FNUZ, DType::kUint4,          DType::kInt4,
                         DType::kFloat4E2M1,     DType::kFloat8E8M0,     DType::kUint2,
                         DType::kInt2,           DType::kFloat6E2M3,     DType::kFloat6E3M2};

/// Every code of `t` once (as many elements as the type has codes), in a [2, n/2] tensor.
Tensor every_code(DType t) {
  const int n = 1 << dtype_bits(t);
  Tensor out(t, {2, n / 2});
  for (int i = 0; i < n; ++i) out.raw()[i] = static_cast<std::byte>(i);
  return out;
}

void expect_same_bytes(const Tensor& a, const Tensor& b) {
  ASSERT_EQ(a.dtype(), b.dtype());
  ASSERT_EQ(a.shape(), b.shape());
  ASSERT_EQ(a.nbytes(), b.nbytes());
  EXPECT_EQ(0, std::memcmp(a.raw(), b.raw(), a.nbytes()));
}

// An .npy file (format 1.0) with a hand-written header dict, padded as numpy pads it.
TEST(NarrowNpy, WritesMlDtypesNameAndOneBytePerElement) {
  // The bytes numpy + ml_dtypes write for np.array([[1, -3, 7], [-8, 0, 2]], dtype='int4') with
  // the name as descr (NEP 1's layout, written out by hand).
  Tensor t(DType::kInt4, {2, 3});
  const double v[] = {1, -3, 7, -8, 0, 2};
  for (int i = 0; i < 6; ++i) t.set_from_double(i, v[i]);
  const std::string expected =
      npy_with_header("{'descr': 'int4', 'fortran_order': False, 'shape': (2, 3), }",
                      std::string("\x01\x0d\x07\x08\x00\x02", 6));
  EXPECT_EQ(write_npy(t), expected);

  for (DType d : kNarrow) {
    SCOPED_TRACE(std::string(dtype_name(d)));
    const Tensor codes = every_code(d);
    const std::string bytes = write_npy(codes);
    EXPECT_NE(bytes.find("{'descr': '" + std::string(dtype_name(d)) + "', 'fortran_order'"),
              std::string::npos);
    EXPECT_EQ(0u, (bytes.find('\n') + 1) % 64);
    auto back = read_npy(bytes);
    ASSERT_TRUE(back.has_value()) << back.status().to_string();
    expect_same_bytes(codes, *back);
  }
}

TEST(NarrowNpy, ReadsNamesAndMasksBitsAboveTheType) {
  auto i4 = read_npy(npy_with_header("{'descr': 'int4', 'fortran_order': False, 'shape': (3,), }",
                                     std::string("\xf3\x1d\x08", 3)));
  ASSERT_TRUE(i4.has_value()) << i4.status().to_string();
  EXPECT_EQ(i4->dtype(), DType::kInt4);
  EXPECT_EQ(testing::values(*i4), (std::vector<double>{3, -3, -8}));
  EXPECT_EQ(static_cast<int>(i4->raw()[0]), 3);

  auto u2 = read_npy(npy_with_header("{'descr': 'uint2', 'fortran_order': False, 'shape': (2,), }",
                                     std::string("\xff\x06", 2)));
  ASSERT_TRUE(u2.has_value()) << u2.status().to_string();
  EXPECT_EQ(testing::values(*u2), (std::vector<double>{3, 2}));

  auto f6 =
      read_npy(npy_with_header("{'descr': 'float6_e2m3fn', 'fortran_order': False, 'shape': (), }",
                               std::string("\xdf", 1)));  // 0x1f: 7.5
  ASSERT_TRUE(f6.has_value()) << f6.status().to_string();
  EXPECT_EQ(f6->rank(), 0);
  EXPECT_EQ(f6->get_as_double(0), 7.5);

  // bfloat16 by name, two bytes little-endian: 1.5 is 0x3fc0.
  auto bf = read_npy(npy_with_header(
      "{'descr': 'bfloat16', 'fortran_order': False, 'shape': (1,), }", std::string("\xc0\x3f")));
  ASSERT_TRUE(bf.has_value()) << bf.status().to_string();
  EXPECT_EQ(bf->dtype(), DType::kBFloat16);
  EXPECT_EQ(bf->get_as_double(0), 1.5);
  // ... but written as float32, which numpy without ml_dtypes reads.
  EXPECT_NE(write_npy(*bf).find("'descr': '<f4'"), std::string::npos);

  // ONNX's spellings are not numpy's: only ml_dtypes' names are descr strings.
  auto onnx_name = read_npy(npy_with_header(
      "{'descr': 'FLOAT8E4M3FN', 'fortran_order': False, 'shape': (1,), }", std::string(1, '\0')));
  ASSERT_FALSE(onnx_name.has_value());
  EXPECT_EQ(onnx_name.status().code(), ErrorCode::kUnsupported);
}

TEST(NarrowNpy, WhatNpSaveWritesForMlDtypesIsRefused) {
  auto saved = load_npy(kNarrowDataFixtures / "ml_dtypes_np_save.npy");  // np.save of an int4 array
  ASSERT_FALSE(saved.has_value());
  EXPECT_EQ(saved.status().code(), ErrorCode::kUnsupported);
  const std::string msg = saved.status().to_string();
  EXPECT_NE(msg.find("'<V1'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("element type is lost"), std::string::npos) << msg;
  EXPECT_NE(msg.find("onnxdbg.save_npz"), std::string::npos) << msg;
  EXPECT_NE(msg.find(".pb"), std::string::npos) << msg;
  for (const char* descr : {"|V1", "<V2", "<f1", "|f1"}) {
    SCOPED_TRACE(descr);
    auto t = read_npy(npy_with_header(
        std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': (1,), }",
        std::string(descr[2] == '2' ? 2 : 1, '\0')));
    ASSERT_FALSE(t.has_value());
    EXPECT_NE(t.status().to_string().find("element type is lost"), std::string::npos)
        << t.status().to_string();
  }
}

TEST(NarrowNpz, ReadsWhatNumpyWithMlDtypesWrote) {
  auto m = load_npz(kNarrowDataFixtures / "ml_dtypes_narrow.npz");
  ASSERT_TRUE(m.has_value()) << m.status().to_string();
  struct Case {
    const char* key;
    DType dtype;
    Shape shape;
    std::vector<double> values;
  };
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<Case> cases = {
      {"f8e4m3fn", DType::kFloat8E4M3FN, {2, 3}, {0.5, -1.75, 448, 0, -0.0, 3}},
      {"f8e4m3fnuz", DType::kFloat8E4M3FNUZ, {2}, {1, -240}},
      {"f8e5m2", DType::kFloat8E5M2, {3}, {1.5, -57344, inf}},
      {"f8e5m2fnuz", DType::kFloat8E5M2FNUZ, {2}, {0.25, -2}},
      {"f8e8m0", DType::kFloat8E8M0, {3}, {1, 0.5, std::ldexp(1.0, -127)}},
      {"f4e2m1", DType::kFloat4E2M1, {3}, {-6, 0.5, 1.5}},
      {"f6e2m3", DType::kFloat6E2M3, {2}, {7.5, -0.125}},
      {"f6e3m2", DType::kFloat6E3M2, {2}, {28, -0.0625}},
      {"i4", DType::kInt4, {2, 3}, {1, -3, 7, -8, 0, 2}},
      {"u4", DType::kUint4, {3}, {0, 15, 9}},
      {"i2", DType::kInt2, {4}, {-2, -1, 0, 1}},
      {"u2", DType::kUint2, {2}, {0, 3}},
      {"bf16", DType::kBFloat16, {3}, {1.5, -3, 0.10009765625}},
  };
  ASSERT_EQ(m->size(), cases.size());
  for (const auto& c : cases) {
    SCOPED_TRACE(c.key);
    ASSERT_TRUE(m->count(c.key));
    const Tensor& t = m->at(c.key);
    EXPECT_EQ(t.dtype(), c.dtype);
    EXPECT_EQ(t.shape(), c.shape);
    EXPECT_EQ(testing::values(t), c.values);
  }
  EXPECT_TRUE(std::signbit(m->at("f8e4m3fn").get_as_double(4)));  // -0.0 kept
  // What ml_dtypes holds in memory is what onnxdbg holds: an int4 -3 is the byte 0x0D.
  EXPECT_EQ(static_cast<int>(m->at("i4").raw()[1]), 0x0d);
}

TEST(NarrowNpz, RoundTripsEveryNarrowType) {
  std::map<std::string, Tensor> in;
  for (DType d : kNarrow) in.emplace(std::string(dtype_name(d)), every_code(d));
  for (bool compress : {false, true}) {
    const fs::path p = testing::fresh_dir(compress ? "deflated" : "stored") / "narrow.npz";
    ASSERT_TRUE(save_npz(p, in, compress).is_ok());
    auto out = load_npz(p);
    ASSERT_TRUE(out.has_value()) << out.status().to_string();
    ASSERT_EQ(out->size(), in.size());
    for (const auto& [name, t] : in) {
      SCOPED_TRACE(name);
      expect_same_bytes(t, out->at(name));
    }
  }
}

TEST(NarrowPolygraphyJson, InputsAndRunResultsRoundTrip) {
  Sample s;
  for (DType d : kNarrow) s.emplace(std::string(dtype_name(d)), every_code(d));
  auto inputs = parse_polygraphy_json(polygraphy_inputs_json({s, s}), "inputs.json");
  ASSERT_TRUE(inputs.has_value()) << inputs.status().to_string();
  ASSERT_EQ(inputs->runs.size(), 1u);
  ASSERT_EQ(inputs->runs[0].second.size(), 2u);
  for (const auto& [name, t] : s) {
    SCOPED_TRACE(name);
    expect_same_bytes(t, inputs->runs[0].second[1].at(name));
  }
  auto results =
      parse_polygraphy_json(polygraphy_run_results_json({{"onnxdbg-reference", {s}}}), "r.json");
  ASSERT_TRUE(results.has_value()) << results.status().to_string();
  ASSERT_EQ(results->kind, PolygraphyData::Kind::kRunResults);
  for (const auto& [name, t] : s) {
    SCOPED_TRACE(name);
    expect_same_bytes(t, results->runs[0].second[0].at(name));
  }
}

const char* kNarrowModel = R"(
<ir_version: 11, opset_import: ["" : 23]>
g (int4[2, 3] q, float8e4m3fn[4] f) => (int4[2, 3] q_out, float8e4m3fn[4] f_out) {
  q_out = Identity(q)
  f_out = Identity(f)
}
)";

TEST(NarrowTestData, FoldersNpzNpyAndJsonLoadAsSamples) {
  const auto model = testing::parse_text_model(kNarrowModel);
  const auto& g = model.graph();
  Tensor q(DType::kInt4, {2, 3});
  for (int i = 0; i < 6; ++i) q.set_from_double(i, i - 3);
  Tensor f(DType::kFloat8E4M3FN, {4});
  for (int i = 0; i < 4; ++i) f.set_from_double(i, 0.75 * i - 1);
  const std::map<std::string, Tensor> inputs = {{"q", q}, {"f", f}};
  const std::map<std::string, Tensor> outputs = {{"q_out", q}, {"f_out", f}};

  // A test-data folder: packed TensorProtos.
  const fs::path set = testing::fresh_dir("case") / "test_data_set_0";
  ASSERT_TRUE(save_test_data(set, g, inputs, outputs).is_ok());
  auto in = load_test_data_inputs(set, g);
  ASSERT_TRUE(in.has_value()) << in.status().to_string();
  expect_same_bytes(q, in->at("q"));
  expect_same_bytes(f, in->at("f"));
  auto out = load_test_data_outputs(set, g);
  ASSERT_TRUE(out.has_value()) << out.status().to_string();
  expect_same_bytes(q, out->at("q_out"));

  // Every file kind load_samples reads, checked against the model's declared types.
  const fs::path dir = testing::fresh_dir("files");
  ASSERT_TRUE(save_npz(dir / "in.npz", inputs).is_ok());
  ASSERT_TRUE(save_samples(dir / "in.json", {inputs, inputs}).is_ok());
  for (const fs::path& p : {set.parent_path(), dir / "in.npz", dir / "in.json"}) {
    SCOPED_TRACE(p.string());
    auto loaded = load_samples(p, g, DataRole::kInputs);
    ASSERT_TRUE(loaded.has_value()) << loaded.status().to_string();
    ASSERT_TRUE(check_samples(loaded->samples, g, DataRole::kInputs, p.string()).is_ok());
    expect_same_bytes(q, loaded->samples[0].at("q"));
    expect_same_bytes(f, loaded->samples[0].at("f"));
  }
  auto tensors = load_tensors(dir / "in.npz", g);
  ASSERT_TRUE(tensors.has_value()) << tensors.status().to_string();
  expect_same_bytes(f, tensors->at("f"));

  // `data to-input`'s merge: a test-data folder and an .npz into one Polygraphy JSON file.
  ASSERT_TRUE(save_npz(dir / "outs.npz", outputs).is_ok());
  auto merged = merge_sample_files({set.parent_path(), dir / "outs.npz"});
  ASSERT_TRUE(merged.has_value()) << merged.status().to_string();
  ASSERT_TRUE(save_samples(dir / "merged.json", *merged).is_ok());
  auto back = load_polygraphy_json(dir / "merged.json");
  ASSERT_TRUE(back.has_value()) << back.status().to_string();
  const Sample& s = back->runs[0].second.at(0);
  for (const char* name : {"q", "f", "q_out", "f_out"}) {
    SCOPED_TRACE(name);
    ASSERT_TRUE(s.count(name));
  }
  expect_same_bytes(q, s.at("q_out"));
  expect_same_bytes(f, s.at("f"));

  // A float32 file for an int4 input is data of another model.
  std::map<std::string, Tensor> wrong = inputs;
  wrong["q"] = Tensor(DType::kFloat, {2, 3});
  ASSERT_TRUE(save_npz(dir / "wrong.npz", wrong).is_ok());
  auto w = load_samples(dir / "wrong.npz", g, DataRole::kInputs);
  ASSERT_TRUE(w.has_value()) << w.status().to_string();
  const Status st = check_samples(w->samples, g, DataRole::kInputs, "wrong.npz");
  ASSERT_FALSE(st.is_ok());
  EXPECT_NE(st.to_string().find("int4"), std::string::npos) << st.to_string();
}

}  // namespace
}  // namespace onnxdbg
