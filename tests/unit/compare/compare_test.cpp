// Tensor comparison: allclose rule, NaN/Inf handling, error statistics, per-output tolerances.
#include "onnxdbg/compare.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace onnxdbg {
namespace {

TEST(Compare, AllcloseRuleAndStatistics) {
  auto e = Tensor::from_vector<float>({4}, {1.0f, 2.0f, 0.0f, -4.0f});
  auto a = Tensor::from_vector<float>({4}, {1.0f, 2.001f, 0.0f, -4.5f});
  auto r = compare_tensors(a, e, {1e-2, 0.0});
  EXPECT_FALSE(r.pass);
  EXPECT_EQ(r.mismatches, 1);
  EXPECT_EQ(r.worst_index, 3);
  EXPECT_NEAR(r.max_abs_error, 0.5, 1e-6);
  EXPECT_NEAR(r.max_rel_error, 0.125, 1e-6);
  // rtol relative to the expected value admits the last element.
  EXPECT_TRUE(compare_tensors(a, e, {1e-2, 0.2}).pass);
  // The median of the absolute error is 0.001-ish: passes with the median statistic.
  EXPECT_TRUE(compare_tensors(a, e, {1e-2, 0.0}, ErrorStat::kMedian).pass);
  EXPECT_FALSE(compare_tensors(a, e, {1e-2, 0.0}, ErrorStat::kMax).pass);
}

TEST(Compare, NanMatchesNanButNotANumber) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto e = Tensor::from_vector<float>({2}, {nan, 1.0f});
  EXPECT_TRUE(compare_tensors(Tensor::from_vector<float>({2}, {nan, 1.0f}), e, {}).pass);
  auto r = compare_tensors(Tensor::from_vector<float>({2}, {0.0f, 1.0f}), e, {});
  EXPECT_FALSE(r.pass);
  EXPECT_EQ(r.mismatches, 1);
  EXPECT_EQ(r.nan_or_inf_expected, 1);
  // Even a loose statistic fails on a NaN pattern mismatch.
  EXPECT_FALSE(compare_tensors(Tensor::from_vector<float>({2}, {0.0f, 1.0f}), e, {1e9, 1e9},
                               ErrorStat::kMean)
                   .pass);
}

// The float32 path works in blocks of 512 elements; its results must be those of the plain
// element-by-element rule, whatever the blocks hold (NaN, Inf, zeros, the worst element last),
// the mean error up to the rounding of its sum.
TEST(Compare, LargeFloatTensorsMatchTheElementwiseRule) {
  const int64_t n = 3000;
  std::vector<float> ev(n), av(n);
  for (int64_t i = 0; i < n; ++i) {
    ev[i] = std::sin(0.01f * static_cast<float>(i)) * (i % 7 == 0 ? 0.0f : 1.0f);
    av[i] = ev[i] + 1e-5f * std::cos(0.3f * static_cast<float>(i));
  }
  ev[2999] = ev[1700] = 0.5f;
  av[2999] = av[1700] = 0.75f;  // the worst error twice: the earlier index is kept
  ev[600] = av[600] = std::numeric_limits<float>::quiet_NaN();  // a block with matching NaN
  av[2100] = std::numeric_limits<float>::infinity();            // an Inf mismatch
  const Tolerance tol{1e-4, 1e-3};
  double max_abs = 0, max_rel = 0, sum = 0;
  int64_t mismatches = 0, worst = -1, finite = 0, nonfinite_a = 0, nonfinite_e = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double a = av[i], e = ev[i];
    nonfinite_a += !std::isfinite(a);
    nonfinite_e += !std::isfinite(e);
    if (!std::isfinite(a) || !std::isfinite(e)) {
      if (!(std::isnan(a) && std::isnan(e)) && a != e) {
        ++mismatches;
        if (worst < 0) worst = i;
        max_abs = max_rel = std::numeric_limits<double>::infinity();
      }
      continue;
    }
    const double d = std::abs(a - e);
    ++finite;
    sum += d;
    if (worst < 0 || d > max_abs) {
      worst = i;
      max_abs = d;
    }
    if (d > 0) max_rel = std::max(max_rel, e == 0 ? INFINITY : d / std::abs(e));
    mismatches += d > tol.atol + tol.rtol * std::abs(e);
  }
  const auto r = compare_tensors(Tensor::from_vector<float>({n}, av),
                                 Tensor::from_vector<float>({n}, ev), tol);
  EXPECT_EQ(r.mismatches, mismatches);
  EXPECT_EQ(r.worst_index, worst);
  EXPECT_EQ(r.max_abs_error, max_abs);
  EXPECT_EQ(r.max_rel_error, max_rel);
  // The sum of errors is added up in another order (partial sums): the last bits may differ.
  EXPECT_NEAR(r.mean_abs_error, sum / static_cast<double>(finite), 1e-12 * sum / finite);
  EXPECT_EQ(r.nan_or_inf_actual, nonfinite_a);
  EXPECT_EQ(r.nan_or_inf_expected, nonfinite_e);
  // Without the Inf, the worst element is the earlier of the two ties.
  av[2100] = ev[2100];
  const auto r2 = compare_tensors(Tensor::from_vector<float>({n}, av),
                                  Tensor::from_vector<float>({n}, ev), tol, ErrorStat::kMax);
  EXPECT_EQ(r2.worst_index, 1700);
  EXPECT_EQ(r2.max_abs_error, 0.25);
}

// Same-type 8-, 32- and 64-bit integers skip blocks of 512 equal elements (memcmp): every figure
// must be the element-by-element rule's, which int16 (not on that path) still takes.
TEST(Compare, EqualIntegerBlocksGiveTheElementwiseFigures) {
  const int64_t n = 2000;
  std::vector<uint8_t> ev(n), av(n);
  for (int64_t i = 0; i < n; ++i) ev[i] = av[i] = static_cast<uint8_t>((i * 37) % 251);
  av[700] = static_cast<uint8_t>(ev[700] + 3);  // the second block
  av[1999] = 0;                                 // the last, partial block
  ev[1200] = 0;                                 // expected 0: an infinite relative error
  av[1200] = 1;
  std::vector<int16_t> ev16(ev.begin(), ev.end()), av16(av.begin(), av.end());
  const Tolerance tol{1.5, 0.01};
  const auto fast = compare_tensors(Tensor::from_vector<uint8_t>({n}, av),
                                    Tensor::from_vector<uint8_t>({n}, ev), tol);
  const auto slow = compare_tensors(Tensor::from_vector<int16_t>({n}, av16),
                                    Tensor::from_vector<int16_t>({n}, ev16), tol);
  EXPECT_EQ(fast.mismatches, slow.mismatches);
  EXPECT_EQ(fast.mismatches, 2);  // errors 3 and 169 exceed 1.5 + 1%; 1 does not
  EXPECT_EQ(fast.worst_index, slow.worst_index);
  EXPECT_EQ(fast.max_abs_error, slow.max_abs_error);
  EXPECT_EQ(fast.max_rel_error, slow.max_rel_error);
  EXPECT_TRUE(std::isinf(fast.max_rel_error));
  EXPECT_EQ(fast.mean_abs_error, slow.mean_abs_error);
  EXPECT_EQ(fast.pass, slow.pass);
  // All equal: the first element is the worst, at zero error, as element by element.
  const auto same = compare_tensors(Tensor::from_vector<uint8_t>({n}, ev),
                                    Tensor::from_vector<uint8_t>({n}, ev), tol);
  EXPECT_TRUE(same.pass);
  EXPECT_EQ(same.worst_index, 0);
  EXPECT_EQ(same.max_abs_error, 0);
  std::vector<int64_t> e64(ev.begin(), ev.end()), a64(av.begin(), av.end());
  const auto wide = compare_tensors(Tensor::from_vector<int64_t>({n}, a64),
                                    Tensor::from_vector<int64_t>({n}, e64), tol);
  EXPECT_EQ(wide.mismatches, slow.mismatches);
  EXPECT_EQ(wide.worst_index, slow.worst_index);
  EXPECT_EQ(wide.mean_abs_error, slow.mean_abs_error);
}

TEST(Compare, ShapeMismatchHasAReason) {
  auto r = compare_tensors(Tensor::from_vector<float>({1, 2}, {1, 2}),
                           Tensor::from_vector<float>({2}, {1, 2}), {});
  EXPECT_FALSE(r.pass);
  EXPECT_NE(r.reason.find("shape 1x2 differs from expected 2"), std::string::npos);
}

TEST(Compare, Float16AgainstFloat32) {
  Tensor h(DType::kFloat16, {2});
  h.set_from_double(0, 0.333);
  h.set_from_double(1, 1.0);
  auto r = compare_tensors(h, Tensor::from_vector<float>({2}, {0.333f, 1.0f}), {1e-3, 1e-3});
  EXPECT_TRUE(r.pass);
  EXPECT_GT(r.max_abs_error, 0.0);
}

// A float8 output against float32 golden values: exact values compared in double, the error
// also stated in steps of float8_e4m3fn at the golden value (step 0.125 in [1, 2), 32 at 448).
TEST(Compare, NarrowFloatErrorsInStepsOfTheType) {
  Tensor f8(DType::kFloat8E4M3FN, {3});
  f8.set_from_double(0, 1.0);
  f8.set_from_double(1, 1.25);
  f8.set_from_double(2, 448);
  auto r = compare_tensors(f8, Tensor::from_vector<float>({3}, {1.0f, 1.0f, 448.0f}), {0, 0});
  EXPECT_FALSE(r.pass);
  EXPECT_EQ(r.mismatches, 1);
  EXPECT_DOUBLE_EQ(r.max_abs_error, 0.25);
  EXPECT_EQ(r.step_dtype, DType::kFloat8E4M3FN);
  EXPECT_DOUBLE_EQ(r.max_error_steps, 2.0);
  EXPECT_EQ(r.worst_index, 1);
  // float32 against float32 has no step type.
  auto f = compare_tensors(Tensor::from_vector<float>({1}, {1}),
                           Tensor::from_vector<float>({1}, {2}), {});
  EXPECT_EQ(f.step_dtype, DType::kUndefined);
  EXPECT_EQ(f.max_error_steps, 0);
}

TEST(Compare, NarrowNanCountsAsNonFinite) {
  Tensor a(DType::kFloat8E5M2, {2});
  a.set_from_double(0, std::numeric_limits<double>::quiet_NaN());
  a.set_from_double(1, std::numeric_limits<double>::infinity());  // saturates to 57344
  EXPECT_EQ(count_nan_or_inf(a), 1);
  Tensor e(DType::kFloat8E5M2, {2});
  e.set_from_double(0, std::numeric_limits<double>::quiet_NaN());
  e.set_from_double(1, 57344);
  auto r = compare_tensors(a, e, {0, 0});
  EXPECT_TRUE(r.pass) << r.reason;
  EXPECT_EQ(r.nan_or_inf_actual, 1);
}

TEST(Compare, Int4ErrorsAreWholeSteps) {
  Tensor a(DType::kInt4, {2}), e(DType::kInt4, {2});
  a.set_from_double(0, -8);
  e.set_from_double(0, -6);
  auto r = compare_tensors(a, e, {0, 0});
  EXPECT_DOUBLE_EQ(r.max_abs_error, 2);
  EXPECT_DOUBLE_EQ(r.max_error_steps, 2);
}

TEST(Compare, PerOutputTolerances) {
  ToleranceSpec spec;
  ASSERT_TRUE(parse_tolerance_args({"1e-3", "logits:0.5", "a:b:0.25"}, {"0"}, spec).is_ok());
  EXPECT_DOUBLE_EQ(spec.for_output("other").atol, 1e-3);
  EXPECT_DOUBLE_EQ(spec.for_output("logits").atol, 0.5);
  EXPECT_DOUBLE_EQ(spec.for_output("a:b").atol, 0.25);
  EXPECT_DOUBLE_EQ(spec.for_output("logits").rtol, 0.0);
  Status bad = parse_tolerance_args({"x:abc"}, {}, spec);
  EXPECT_FALSE(bad.is_ok());
  EXPECT_NE(bad.to_string().find("not a non-negative number"), std::string::npos);
  EXPECT_FALSE(parse_tolerance_args({"-1"}, {}, spec).is_ok());
}

}  // namespace
}  // namespace onnxdbg
