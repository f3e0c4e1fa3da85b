// Shape and data-movement kernels on the reference interpreter (Reshape, Transpose, Concat, Split,
// Squeeze, Unsqueeze, Flatten, Shape, Expand, Tile, Constant*, Range, TopK, OneHot, NonZero,
// DepthToSpace, SpaceToDepth, Trilu, EyeLike, Unique), with hand-computed values; the narrow types
// (one byte per element in memory) move through them unchanged.
#include "../../test_util.h"

namespace onnxdbg {
namespace {

using testing::expect_tensor_near;
using testing::iota;
using testing::parse_text_model;
using testing::run_reference;
using testing::run_reference_error;

std::vector<double> iota_values(int n) {
  std::vector<double> v(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) v[static_cast<size_t>(i)] = i;
  return v;
}

TEST(ShapeOps, ReshapeZeroCopiesAndMinusOneInfers) {
  auto m = parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[2,3,4] x) => (float[2,12] y, float[4,6] z) {
      s1 = Constant<value = int64[2] {0, -1}>()
      s2 = Constant<value = int64[2] {-1, 6}>()
      y = Reshape(x, s1)
      z = Reshape(x, s2)
    })");
  auto out = run_reference(m, {{"x", iota({2, 3, 4})}});
  expect_tensor_near(out["y"], {2, 12}, iota_values(24));
  expect_tensor_near(out["z"], {4, 6}, iota_values(24));
}

TEST(ShapeOps, ReshapeAllowZeroKeepsZero) {
  auto m = parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 14]>
    g (float[0,3] x) => (float[3,0] y) {
      s = Constant<value = int64[2] {3, 0}>()
      y = Reshape<allowzero = 1>(x, s)
    })");
  auto out = run_reference(m, {{"x", Tensor(DType::kFloat, {0, 3})}});
  EXPECT_EQ(shape_to_string(out["y"].shape()), "3x0");
}

TEST(ShapeOps, ReshapeMismatchNamesBothShapes) {
  auto m = parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[2,3] x) => (float[4,2] y) {
      s = Constant<value = int64[2] {4, 2}>()
      y = Reshape(x, s)
    })");
  const std::string err = run_reference_error(m, {{"x", iota({2, 3})}});
  EXPECT_NE(err.find("2x3"), std::string::npos) << err;
  EXPECT_NE(err.find("[4, 2]"), std::string::npos) << err;
  EXPECT_NE(err.find("Reshape"), std::string::npos) << err;
}

TEST(ShapeOps, ReshapeTwoMinusOnesIsAnError) {
  auto m = parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[2,3] x) => (float[6] y) {
      s = Constant<value = int64[2] {-1, -1}>()
      y = Reshape(x, s)
    })");
  const std::string err = run_reference_error(m, {{"x", iota({2, 3})}});
  EXPECT_NE(err.find("more than one dimension is -1"), std::string::npos) << err;
}

TEST(ShapeOps, TransposeFloat16) {
  auto m = parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float16[2,3] x) => (float16[3,2] y) { y = Transpose<perm = [1, 0]>(x) }
  )");
  Tensor x(DType::kFloat16, {2, 3});
  for (int i = 0; i < 6; ++i) x.set_from_double(i, i + 0.5);
  auto out = run_reference(m, {{"x", x}});
  EXPECT_EQ(out["y"].dtype(), DType::kFloat16);
  expect_tensor_near(out["y"], {3, 2}, {0.5, 3.5, 1.5, 4.5, 2.5, 5.5});
}

TEST(ShapeOps, TransposeBadPermIsAnError) {
  auto m = parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[2,3] x) => (float[3,2] y) { y = Transpose<perm = [0, 0]>(x) }
  )");
  const std::string err = run_reference_error(m, {{"x", iota({2, 3})}});
  EXPECT_NE(err.find("[0, 0]"), std::string::npos) << err;
}

TEST(ShapeOps, ConcatNegativeAxisAndSplitInput) {
  auto m = parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[2,1] a, float[2,2] b) => (float[2,3] c, float[2,1] p, float[2,2] q) {
      c = Concat<axis = -1>(a, b)
      parts = Constant<value = int64[2] {1, 2}>()
      p, q = Split<axis = 1>(c, parts)
    })");
  auto out = run_reference(m, {{"a", Tensor::from_vector<float>({2, 1}, {0, 3})},
                               {"b", Tensor::from_vector<float>({2, 2}, {1, 2, 4, 5})}});
  expect_tensor_near(out["c"], {2, 3}, {0, 1, 2, 3, 4, 5});
  expect_tensor_near(out["p"], {2, 1}, {0, 3});
  expect_tensor_near(out["q"], {2, 2}, {1, 2, 4, 5});
}

TEST(ShapeOps, ConcatShapeMismatchIsAnError) {
  auto m = parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[2,1] a, float[3,2] b) => (float[2,3] c) { c = Concat<axis = 1>(a, b) }
  )");
  const std::string err = run_reference_error(m, {{"a", iota({2, 1})}, {"b", iota({3, 2})}});
  EXPECT_NE(err.find("3x2"), std::string::npos) << err;
}

TEST(ShapeOps, SplitEqualPartsOpset11Attribute) {
  auto m = parse_text_model(R"(
    <ir_version: 7, opset_import: ["" : 11]>
    g (float[6] x) => (float[2] a, float[4] b, float[3] c, float[3] d) {
      a, b = Split<split = [2, 4]>(x)
      c, d = Split(x)
    })");
  auto out = run_reference(m, {{"x", iota({6})}});
  expect_tensor_near(out["a"], {2}, {0, 1});
  expect_tensor_near(out["b"], {4}, {2, 3, 4, 5});
  expect_tensor_near(out["c"], {3}, {0, 1, 2});
  expect_tensor_near(out["d"], {3}, {3, 4, 5});
}

TEST(ShapeOps, SqueezeUnsqueezeAttributeAndInputForms) {
  auto m11 = parse_text_model(R"(
    <ir_version: 7, opset_import: ["" : 11]>
    g (float[1,3,1] x) => (float[3] s, float[1,3,1,1] u) {
      s = Squeeze<axes = [0, -1]>(x)
      u = Unsqueeze<axes = [-1]>(x)
    })");
  auto out = run_reference(m11, {{"x", iota({1, 3, 1})}});
  expect_tensor_near(out["s"], {3}, {0, 1, 2});
  expect_tensor_near(out["u"], {1, 3, 1, 1}, {0, 1, 2});
  auto m13 = parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[1,3,1] x) => (float[3] s, float[1,1,3,1] u) {
      s = Squeeze(x)
      axes = Constant<value = int64[1] {1}>()
      u = Unsqueeze(x, axes)
    })");
  out = run_reference(m13, {{"x", iota({1, 3, 1})}});
  expect_tensor_near(out["s"], {3}, {0, 1, 2});
  expect_tensor_near(out["u"], {1, 1, 3, 1}, {0, 1, 2});
}

TEST(ShapeOps, SqueezeNonOneAxisIsAnError) {
  auto m = parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[1,3] x) => (float[1] y) {
      axes = Constant<value = int64[1] {1}>()
      y = Squeeze(x, axes)
    })");
  const std::string err = run_reference_error(m, {{"x", iota({1, 3})}});
  EXPECT_NE(err.find("size is 3"), std::string::npos) << err;
}

TEST(ShapeOps, FlattenShapeSize) {
  auto m = parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 15]>
    g (float[2,3,4] x) => (float[6,4] f, int64[2] s, int64 n) {
      f = Flatten<axis = 2>(x)
      s = Shape<start = -2>(x)
      n = Size(x)
    })");
  auto out = run_reference(m, {{"x", iota({2, 3, 4})}});
  expect_tensor_near(out["f"], {6, 4}, iota_values(24));
  expect_tensor_near(out["s"], {2}, {3, 4});
  expect_tensor_near(out["n"], {}, {24});
}

TEST(ShapeOps, ExpandAndTile) {
  auto m = parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[2,1] x) => (float[2,3] e, float[4,2] t) {
      shape = Constant<value = int64[2] {1, 3}>()
      e = Expand(x, shape)
      reps = Constant<value = int64[2] {2, 2}>()
      t = Tile(x, reps)
    })");
  auto out = run_reference(m, {{"x", Tensor::from_vector<float>({2, 1}, {1, 2})}});
  expect_tensor_near(out["e"], {2, 3}, {1, 1, 1, 2, 2, 2});
  expect_tensor_near(out["t"], {4, 2}, {1, 1, 2, 2, 1, 1, 2, 2});
}

TEST(ShapeOps, ConstantsAndConstantOfShape) {
  auto m = parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (int64[2] shape) => (int32[2,3] c, int64[3] v, float f) {
      c = ConstantOfShape<value = int32[1] {7}>(shape)
      v = Constant<value_ints = [4, -5, 6]>()
      f = Constant<value_float = 2.5>()
    })");
  auto out = run_reference(m, {{"shape", Tensor::from_vector<int64_t>({2}, {2, 3})}});
  EXPECT_EQ(out["c"].dtype(), DType::kInt32);
  expect_tensor_near(out["c"], {2, 3}, {7, 7, 7, 7, 7, 7});
  expect_tensor_near(out["v"], {3}, {4, -5, 6});
  expect_tensor_near(out["f"], {}, {2.5});
}

TEST(ShapeOps, Range) {
  auto m = parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (int32 a, int32 b, int32 d, float fa, float fb, float fd) => (int32[N] r, float[M] f) {
      r = Range(a, b, d)
      f = Range(fa, fb, fd)
    })");
  auto out = run_reference(m, {{"a", Tensor::scalar<int32_t>(10)},
                               {"b", Tensor::scalar<int32_t>(4)},
                               {"d", Tensor::scalar<int32_t>(-3)},
                               {"fa", Tensor::scalar<float>(1)},
                               {"fb", Tensor::scalar<float>(2)},
                               {"fd", Tensor::scalar<float>(0.25f)}});
  expect_tensor_near(out["r"], {2}, {10, 7});
  expect_tensor_near(out["f"], {4}, {1, 1.25, 1.5, 1.75});
}

TEST(ShapeOps, TopKTiesTakeLowerIndex) {
  auto m = parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 11]>
    g (float[2,4] x) => (float[2,2] v, int64[2,2] i, float[2,2] sv, int64[2,2] si) {
      k = Constant<value = int64[1] {2}>()
      v, i = TopK(x, k)
      sv, si = TopK<largest = 0>(x, k)
    })");
  auto out =
      run_reference(m, {{"x", Tensor::from_vector<float>({2, 4}, {3, 5, 5, 1, 2, 2, 2, 9})}});
  expect_tensor_near(out["v"], {2, 2}, {5, 5, 9, 2});
  expect_tensor_near(out["i"], {2, 2}, {1, 2, 3, 0});
  expect_tensor_near(out["sv"], {2, 2}, {1, 3, 2, 2});
  expect_tensor_near(out["si"], {2, 2}, {3, 0, 0, 1});
}

TEST(ShapeOps, TopKTooLargeKIsAnError) {
  auto m = parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 11]>
    g (float[3] x) => (float[4] v, int64[4] i) {
      k = Constant<value = int64[1] {4}>()
      v, i = TopK(x, k)
    })");
  const std::string err = run_reference_error(m, {{"x", iota({3})}});
  EXPECT_NE(err.find("k = 4"), std::string::npos) << err;
}

TEST(ShapeOps, OneHotNegativeIndexAndAxis0) {
  auto m = parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 11]>
    g (int64[3] idx) => (float[4,3] y) {
      depth = Constant<value = int64 {4}>()
      vals = Constant<value = float[2] {0, 5}>()
      y = OneHot<axis = 0>(idx, depth, vals)
    })");
  auto out = run_reference(m, {{"idx", Tensor::from_vector<int64_t>({3}, {1, -1, 7})}});
  expect_tensor_near(out["y"], {4, 3}, {0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 5, 0});
}

TEST(ShapeOps, NonZero) {
  auto m = parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[2,2] x) => (int64[2,N] y) { y = NonZero(x) }
  )");
  auto out = run_reference(m, {{"x", Tensor::from_vector<float>({2, 2}, {1, 0, 2, 3})}});
  expect_tensor_near(out["y"], {2, 3}, {0, 1, 1, 0, 0, 1});
}

TEST(ShapeOps, DepthToSpaceCrdAndSpaceToDepth) {
  auto m = parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[1,4,1,1] x) => (float[1,1,2,2] crd, float[1,1,2,2] dcr, float[1,4,1,1] back) {
      crd = DepthToSpace<blocksize = 2, mode = "CRD">(x)
      dcr = DepthToSpace<blocksize = 2>(x)
      back = SpaceToDepth<blocksize = 2>(dcr)
    })");
  auto out = run_reference(m, {{"x", iota({1, 4, 1, 1})}});
  expect_tensor_near(out["crd"], {1, 1, 2, 2}, {0, 1, 2, 3});
  expect_tensor_near(out["dcr"], {1, 1, 2, 2}, {0, 1, 2, 3});
  expect_tensor_near(out["back"], {1, 4, 1, 1}, {0, 1, 2, 3});
  // With 2 output channels CRD and DCR differ.
  auto m2 = parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[1,8,1,1] x) => (float[1,2,2,2] crd, float[1,2,2,2] dcr) {
      crd = DepthToSpace<blocksize = 2, mode = "CRD">(x)
      dcr = DepthToSpace<blocksize = 2>(x)
    })");
  out = run_reference(m2, {{"x", iota({1, 8, 1, 1})}});
  expect_tensor_near(out["crd"], {1, 2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
  expect_tensor_near(out["dcr"], {1, 2, 2, 2}, {0, 2, 4, 6, 1, 3, 5, 7});
}

TEST(ShapeOps, TriluAndEyeLike) {
  auto m = parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 14]>
    g (float[3,3] x) => (float[3,3] lo, float[3,3] up, int32[3,3] eye) {
      k = Constant<value = int64 {-1}>()
      lo = Trilu<upper = 0>(x, k)
      up = Trilu(x)
      eye = EyeLike<k = 1, dtype = 6>(x)
    })");
  auto out = run_reference(m, {{"x", iota({3, 3}, 1)}});
  expect_tensor_near(out["lo"], {3, 3}, {0, 0, 0, 4, 0, 0, 7, 8, 0});
  expect_tensor_near(out["up"], {3, 3}, {1, 2, 3, 0, 5, 6, 0, 0, 9});
  EXPECT_EQ(out["eye"].dtype(), DType::kInt32);
  expect_tensor_near(out["eye"], {3, 3}, {0, 1, 0, 0, 0, 1, 0, 0, 0});
}

TEST(ShapeOps, UniqueSortedAndUnsorted) {
  auto m = parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 11]>
    g (float[6] x) => (float[4] y, int64[4] idx, int64[6] inv, int64[4] cnt, float[4] uy) {
      y, idx, inv, cnt = Unique(x)
      uy = Unique<sorted = 0>(x)
    })");
  auto out = run_reference(m, {{"x", Tensor::from_vector<float>({6}, {2, 1, 1, 3, 4, 3})}});
  expect_tensor_near(out["y"], {4}, {1, 2, 3, 4});
  expect_tensor_near(out["idx"], {4}, {1, 0, 3, 4});
  expect_tensor_near(out["inv"], {6}, {1, 0, 0, 2, 3, 2});
  expect_tensor_near(out["cnt"], {4}, {2, 1, 2, 1});
  expect_tensor_near(out["uy"], {4}, {2, 1, 3, 4});
}

TEST(ShapeOps, StringsMoveThroughConcatAndReshape) {
  auto m = parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (string[2] a, string[2] b) => (string[2,2] y) {
      c = Concat<axis = 0>(a, b)
      s = Constant<value = int64[2] {2, 2}>()
      r = Reshape(c, s)
      y = Transpose(r)
    })");
  auto out = run_reference(m, {{"a", Tensor::from_vector<std::string>({2}, {"p", "q"})},
                               {"b", Tensor::from_vector<std::string>({2}, {"r", "s"})}});
  ASSERT_EQ(out["y"].numel(), 4);
  EXPECT_EQ(out["y"].strings(), (std::vector<std::string>{"p", "r", "q", "s"}));
}

// int4 and float8 values move through the data-movement ops byte for byte (ONNX 1.23 schemas
// take the narrow types for all of them).
TEST(ShapeOps, NarrowTypesMoveUnchanged) {
  auto model = parse_text_model(R"(<ir_version: 11, opset_import: ["" : 25]>
g (int4[2,3] x, float8e4m3fn[2,3] f) => (int4[6,2] y, int64[2] s, int64 n, float8e4m3fn[3,2,1] t) {
  shape = Constant <value = int64[2] {6, 2}> ()
  axes = Constant <value = int64[1] {0}> ()
  last = Constant <value = int64[1] {2}> ()
  i = Identity(x)
  tr = Transpose <perm = [1, 0]> (i)
  c = Concat <axis = 1> (tr, tr)
  r = Reshape(c, shape)
  fl = Flatten <axis = 1> (r)
  u = Unsqueeze(fl, axes)
  y = Squeeze(u, axes)
  s = Shape(x)
  n = Size(f)
  ft = Transpose <perm = [1, 0]> (f)
  t = Unsqueeze(ft, last)
})");
  Tensor x = Tensor::make(DType::kInt4, {2, 3}).value();
  Tensor f = Tensor::make(DType::kFloat8E4M3FN, {2, 3}).value();
  const std::vector<double> xv{-8, -1, 0, 1, 6, 7}, fv{0.5, -448, 0.015625, 3, -0.25, 240};
  for (int64_t i = 0; i < 6; ++i) {
    x.set_from_double(i, xv[static_cast<size_t>(i)]);
    f.set_from_double(i, fv[static_cast<size_t>(i)]);
  }
  auto out = run_reference(model, {{"x", x}, {"f", f}});
  ASSERT_EQ(out["y"].dtype(), DType::kInt4);
  EXPECT_EQ(out["y"].shape(), (Shape{6, 2}));
  // Transposed [[-8, 1], [-1, 6], [0, 7]], each row twice, then 6x2.
  EXPECT_EQ(testing::values(out["y"]),
            (std::vector<double>{-8, 1, -8, 1, -1, 6, -1, 6, 0, 7, 0, 7}));
  EXPECT_EQ(testing::values(out["s"]), (std::vector<double>{2, 3}));
  EXPECT_EQ(testing::values(out["n"]), (std::vector<double>{6}));
  ASSERT_EQ(out["t"].dtype(), DType::kFloat8E4M3FN);
  EXPECT_EQ(testing::values(out["t"]), (std::vector<double>{0.5, 3, -448, -0.25, 0.015625, 240}));
}

}  // namespace
}  // namespace onnxdbg
