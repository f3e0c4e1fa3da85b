// Input generation: shapes from --input-shapes, dynamic-dim errors, seeded reproducible values,
// per-input value ranges.
#include "comparator/input_gen.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "test_util.h"

namespace onnxdbg {
namespace {

const char* kInputGenModel = R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[batch, 3] x, int64 sr, bool[2] flag) => (float[batch, 3] y) { y = Identity(x) }
)";

TEST(InputGen, ParsesBothShapeSyntaxes) {
  std::map<std::string, Shape> s;
  ASSERT_TRUE(parse_input_shapes({"x:1x3x224x224", "a:b:[2,5]", "s:[]"}, s).is_ok());
  EXPECT_EQ(s["x"], (Shape{1, 3, 224, 224}));
  EXPECT_EQ(s["a:b"], (Shape{2, 5}));
  EXPECT_EQ(s["s"], Shape{});
  Status bad = parse_input_shapes({"x:1xfoo"}, s);
  EXPECT_NE(bad.to_string().find("'foo' is not a non-negative integer"), std::string::npos);
  EXPECT_FALSE(parse_input_shapes({"x:99999999999x99999999999"}, s).is_ok());
  // Several entries in one value, separated by commas outside brackets.
  std::map<std::string, Shape> m;
  ASSERT_TRUE(parse_input_shapes({"input:1x512,h:[2,1,64],c:2x1x64"}, m).is_ok());
  EXPECT_EQ(m["input"], (Shape{1, 512}));
  EXPECT_EQ(m["h"], (Shape{2, 1, 64}));
  EXPECT_EQ(m["c"], (Shape{2, 1, 64}));
}

TEST(InputGen, MissingDynamicDimNamesIt) {
  auto m = testing::parse_text_model(kInputGenModel);
  auto r = generate_inputs(m.graph(), {});
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.status().to_string().find("dynamic dimension 'batch' on axis 0"), std::string::npos)
      << r.status().to_string();
}

TEST(InputGen, OverrideMustMatchStaticDims) {
  auto m = testing::parse_text_model(kInputGenModel);
  InputGenOptions o;
  o.shapes["x"] = {2, 4};
  auto r = generate_inputs(m.graph(), o);
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.status().to_string().find("fixes it to 3"), std::string::npos);
  o.shapes.clear();
  o.shapes["z"] = {1};
  r = generate_inputs(m.graph(), o);
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.status().to_string().find("'z', which is not an input"), std::string::npos);
}

TEST(InputGen, SeededValuesInRange) {
  auto m = testing::parse_text_model(kInputGenModel);
  InputGenOptions o;
  o.shapes["x"] = {4, 3};
  ASSERT_TRUE(parse_value_ranges({"[-2,2]", "sr:[16000,16000]"}, o).is_ok());
  auto a = generate_inputs(m.graph(), o);
  auto b = generate_inputs(m.graph(), o);
  ASSERT_TRUE(a.has_value() && b.has_value());
  EXPECT_EQ(testing::values(a->at("x")), testing::values(b->at("x")));
  for (double v : testing::values(a->at("x"))) {
    EXPECT_GE(v, -2.0);
    EXPECT_LT(v, 2.0);
  }
  EXPECT_EQ(a->at("sr").get_as_double(0), 16000.0);
  EXPECT_EQ(a->at("sr").rank(), 0);
  EXPECT_EQ(a->at("flag").dtype(), DType::kBool);
  o.seed = 2;
  auto c = generate_inputs(m.graph(), o);
  EXPECT_NE(testing::values(a->at("x")), testing::values(c->at("x")));
}

TEST(InputGen, NarrowTypesStayInTheTypesRange) {
  auto m = testing::parse_text_model(R"(
<ir_version: 11, opset_import: ["" : 23]>
g (int4[64] i4, uint2[64] u2, float8e4m3fn[64] f8, float8e8m0[64] e8m0, float4e2m1[64] f4)
    => (int4[64] y) { y = Identity(i4) }
)");
  InputGenOptions o;
  ASSERT_TRUE(parse_value_ranges({"[-100,1000]", "f4:[-1,1]"}, o).is_ok());
  auto a = generate_inputs(m.graph(), o);
  ASSERT_TRUE(a.has_value()) << a.status().to_string();
  EXPECT_EQ(a->at("i4").dtype(), DType::kInt4);
  std::set<double> seen;
  for (double v : testing::values(a->at("i4"))) {
    EXPECT_GE(v, -8);  // clamped to the type, not wrapped around
    EXPECT_LE(v, 7);
    EXPECT_EQ(v, std::floor(v));
    seen.insert(v);
  }
  EXPECT_GT(seen.size(), 8u);
  for (double v : testing::values(a->at("u2"))) {
    EXPECT_GE(v, 0);
    EXPECT_LE(v, 3);
  }
  for (double v : testing::values(a->at("f8"))) {
    EXPECT_GE(v, -100);
    EXPECT_LE(v, 448);  // E4M3FN's largest finite value
  }
  for (double v : testing::values(a->at("f4"))) {
    EXPECT_GE(v, -1);
    EXPECT_LE(v, 1);
  }
  for (double v : testing::values(a->at("e8m0"))) {
    EXPECT_GT(v, 0);  // E8M0 has no zero, no sign
    EXPECT_TRUE(std::isfinite(v));
  }
  // The default range [0, 1] gives int4 values 0 and 1 only.
  auto d = generate_inputs(m.graph(), {});
  ASSERT_TRUE(d.has_value()) << d.status().to_string();
  for (double v : testing::values(d->at("i4"))) EXPECT_TRUE(v == 0 || v == 1) << v;
}

}  // namespace
}  // namespace onnxdbg
