// Tensor comparison with allclose tolerances and error statistics.
#include "onnxdbg/compare.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <vector>

namespace onnxdbg {

Expected<ErrorStat> error_stat_from_name(const std::string& name) {
  return enum_from_name(kErrorStatNames, name, "error statistic");
}

std::string error_stat_name(ErrorStat s) { return std::string(enum_name(kErrorStatNames, s)); }

void mark_quantized(TensorComparison& r, DType dtype, double scale) {
  if (!(scale > 0) || !(is_integer(dtype) || is_narrow_integer(dtype))) return;
  r.step_dtype = dtype;
  r.max_error_steps = r.max_abs_error;
  r.quant_scale = scale;
}

bool is_low_precision(DType t) {
  return t == DType::kFloat16 || t == DType::kBFloat16 || is_narrow_float(t) ||
         is_narrow_integer(t);
}

int64_t count_nan_or_inf(const Tensor& t) {
  if (!is_floating(t.dtype()) && !is_narrow_float(t.dtype())) return 0;
  int64_t n = 0;
  if (t.dtype() == DType::kFloat) {  // the common case, without a per-element type switch
    const float* p = t.data<float>();
    for (int64_t i = 0; i < t.numel(); ++i) n += !std::isfinite(p[i]);
    return n;
  }
  for (int64_t i = 0; i < t.numel(); ++i) n += !std::isfinite(t.get_as_double(i));
  return n;
}

namespace {

/// Whether any of a[0..n) and e[0..n) is NaN or Inf (all exponent bits set), four at a time.
bool any_nonfinite(const float* a, const float* e, int64_t n) {
  typedef uint32_t V4u __attribute__((vector_size(16)));
  const V4u exp_mask = {0x7f800000u, 0x7f800000u, 0x7f800000u, 0x7f800000u};
  V4u bad = {0, 0, 0, 0};
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    V4u ua, ue;
    std::memcpy(&ua, a + i, sizeof ua);
    std::memcpy(&ue, e + i, sizeof ue);
    bad |= (V4u)((ua & exp_mask) == exp_mask) | (V4u)((ue & exp_mask) == exp_mask);
  }
  bool any = (bad[0] | bad[1] | bad[2] | bad[3]) != 0;
  for (; i < n; ++i) any = any || !std::isfinite(a[i]) || !std::isfinite(e[i]);
  return any;
}

/// What one pass over a block of finite float32 pairs finds (see float_block).
struct FloatBlock {
  double max_abs = 0;      ///< largest |a - e|
  double sum_abs = 0;      ///< sum of |a - e| (in four interleaved partial sums)
  int64_t outside = 0;     ///< elements with |a - e| > atol + rtol * |e|
  int64_t candidates = 0;  ///< elements with |a - e| > rel_floor * |e|
};

/// One pass over `n` finite pairs, four at a time in two pairs (SSE2 and the like, through GCC's
/// vector extensions: the compiler does not vectorise the double max by itself). Writes each
/// |double(a) - double(e)| to `d`; every value is computed as the scalar code computes it. The
/// sum goes into four partial sums (elements i mod 4), so that no add waits on the one before:
/// one running sum cost about 1.3 ns an element, more than the rest of the pass.
FloatBlock float_block(const float* a, const float* e, int64_t n, const Tolerance& tol,
                       double rel_floor, double* d) {
  typedef double V2d __attribute__((vector_size(16)));
  typedef int64_t V2i __attribute__((vector_size(16)));
  typedef float V2f __attribute__((vector_size(8)));
  const V2i abs_mask = {INT64_MAX, INT64_MAX};  // clears the sign bit, as std::abs does
  const V2d atol = {tol.atol, tol.atol}, rtol = {tol.rtol, tol.rtol};
  const V2d floor = {rel_floor, rel_floor};
  V2d vmax = {0, 0}, vsum[2] = {{0, 0}, {0, 0}};
  V2i vout = {0, 0}, vcand = {0, 0};
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    for (int h = 0; h < 2; ++h) {
      V2f fa, fe;
      std::memcpy(&fa, a + i + 2 * int64_t{h}, sizeof fa);
      std::memcpy(&fe, e + i + 2 * int64_t{h}, sizeof fe);
      const V2d de = __builtin_convertvector(fe, V2d);
      const V2d dv = (V2d)((V2i)(__builtin_convertvector(fa, V2d) - de) & abs_mask);
      const V2d ae = (V2d)((V2i)de & abs_mask);
      std::memcpy(d + i + 2 * int64_t{h}, &dv, sizeof dv);
      vmax = dv > vmax ? dv : vmax;
      vsum[h] += dv;
      vout -= dv > atol + rtol * ae;  // a true lane is -1
      vcand -= dv > floor * ae;
    }
  }
  FloatBlock b;
  b.max_abs = vmax[0] > vmax[1] ? vmax[0] : vmax[1];
  b.sum_abs = (vsum[0][0] + vsum[0][1]) + (vsum[1][0] + vsum[1][1]);
  b.outside = vout[0] + vout[1];
  b.candidates = vcand[0] + vcand[1];
  for (; i < n; ++i) {
    const double ev = e[i];
    d[i] = std::abs(static_cast<double>(a[i]) - ev);
    b.sum_abs += d[i];
    b.max_abs = d[i] > b.max_abs ? d[i] : b.max_abs;
    b.outside += d[i] > tol.atol + tol.rtol * std::abs(ev);
    b.candidates += d[i] > rel_floor * std::abs(ev);
  }
  return b;
}

// A shape or string-ness that differs fails the comparison without looking at the values.
bool differ_in_kind(const Tensor& actual, const Tensor& expected, TensorComparison& r) {
  if (actual.shape() != expected.shape()) {
    r.reason = "shape " + shape_to_string(actual.shape()) + " differs from expected " +
               shape_to_string(expected.shape());
    r.mismatches = std::max(actual.numel(), expected.numel());
    return true;
  }
  if ((actual.dtype() == DType::kString) != (expected.dtype() == DType::kString)) {
    r.reason = "type " + std::string(dtype_name(actual.dtype())) + " differs from expected " +
               std::string(dtype_name(expected.dtype()));
    r.mismatches = r.numel;
    return true;
  }
  return false;
}

void compare_strings(const Tensor& actual, const Tensor& expected, TensorComparison& r) {
  for (int64_t i = 0; i < r.numel; ++i)
    if (actual.strings()[static_cast<size_t>(i)] != expected.strings()[static_cast<size_t>(i)]) {
      if (r.worst_index < 0) r.worst_index = i;
      ++r.mismatches;
    }
  r.pass = r.mismatches == 0;
  if (!r.pass) r.reason = std::to_string(r.mismatches) + " strings differ";
}

// The error statistics of one numeric comparison, element by element (step) or, for float32
// against float32, block by block (float_blocks); finish() decides the verdict.
class ErrorAccumulator {
 public:
  ErrorAccumulator(TensorComparison& r, const Tensor& actual, const Tensor& expected,
                   const Tolerance& tol, ErrorStat stat)
      : r_(r),
        tol_(tol),
        stat_(stat),
        keep_(stat == ErrorStat::kMedian),
        float_actual_(is_floating(actual.dtype()) || is_narrow_float(actual.dtype())),
        float_expected_(is_floating(expected.dtype()) || is_narrow_float(expected.dtype())) {
    // Per-element errors are kept only for the median: on large tensors (layerwise runs compare
    // hundreds of them) the two vectors would cost 16 bytes per element.
    if (keep_) {
      abs_err_.reserve(static_cast<size_t>(r.numel));
      rel_err_.reserve(static_cast<size_t>(r.numel));
    }
    r.step_dtype = is_low_precision(actual.dtype())     ? actual.dtype()
                   : is_low_precision(expected.dtype()) ? expected.dtype()
                                                        : DType::kUndefined;
  }

  // Whether float_blocks gives what step() would (it keeps neither per-element errors nor the
  // sum of relative errors).
  bool blocks_apply() const { return !keep_ && stat_ != ErrorStat::kMean; }

  // One element, in index order; float_blocks reproduces its effect exactly.
  void step(int64_t i, double a, double e) {
    const bool fa = std::isfinite(a), fe = std::isfinite(e);
    r_.nan_or_inf_actual += !fa && float_actual_;
    r_.nan_or_inf_expected += !fe && float_expected_;
    if (!fa || !fe) {
      // Equal non-finite values (NaN with NaN, +Inf with +Inf) match; anything else does not.
      const bool same = (std::isnan(a) && std::isnan(e)) || a == e;
      if (!same) {
        ++r_.mismatches;
        if (r_.worst_index < 0) r_.worst_index = i;
        r_.max_abs_error = std::numeric_limits<double>::infinity();
        r_.max_rel_error = std::numeric_limits<double>::infinity();
      }
      return;
    }
    const double d = std::abs(a - e);
    // The division is the costly part of this loop; skip it when it cannot change what is kept.
    const bool need_rel = keep_ || stat_ == ErrorStat::kMean || d > r_.max_rel_error * std::abs(e);
    const double rel = !need_rel || d == 0
                           ? 0
                           : (e == 0 ? std::numeric_limits<double>::infinity() : d / std::abs(e));
    if (keep_) {
      abs_err_.push_back(d);
      rel_err_.push_back(rel);
    }
    ++finite_pairs_;
    sum_abs_ += d;
    sum_rel_ += rel;
    if (r_.worst_index < 0 || d > r_.max_abs_error) {
      r_.worst_index = i;
      r_.max_abs_error = d;
    }
    r_.max_rel_error = std::max(r_.max_rel_error, rel);
    if (d > tol_.atol + tol_.rtol * std::abs(e)) ++r_.mismatches;
    if (r_.step_dtype != DType::kUndefined && d > 0) {
      const double unit = dtype_step(r_.step_dtype, e);
      if (unit > 0) r_.max_error_steps = std::max(r_.max_error_steps, d / unit);
    }
  }

  void float_blocks(const float* af, const float* ef);
  /// Integers against integers of the same type, `T`: a block of 512 equal elements does what
  /// step() would do for 512 zero errors (memcmp decides), other blocks go element by element.
  /// Needs tolerances >= 0 (a zero error is then within them).
  template <class T>
  void integer_blocks(const T* a, const T* e) {
    constexpr int64_t kBlock = 512;
    for (int64_t begin = 0; begin < r_.numel; begin += kBlock) {
      const int64_t n = std::min(kBlock, r_.numel - begin);
      if (std::memcmp(a + begin, e + begin, static_cast<size_t>(n) * sizeof(T)) == 0) {
        if (r_.worst_index < 0) r_.worst_index = begin;  // max_abs_error 0, as step() keeps it
        finite_pairs_ += n;
        continue;
      }
      for (int64_t i = begin; i < begin + n; ++i)
        step(i, static_cast<double>(a[i]), static_cast<double>(e[i]));
    }
  }
  void finish();

 private:
  TensorComparison& r_;
  const Tolerance& tol_;
  const ErrorStat stat_;
  const bool keep_;
  const bool float_actual_, float_expected_;
  std::vector<double> abs_err_, rel_err_;
  double sum_abs_ = 0, sum_rel_ = 0;
  int64_t finite_pairs_ = 0;
};

// float32 against float32 (layerwise runs compare hundreds of megabytes of it), in blocks that
// stay in L1 cache: passes the compiler vectorises find whether the block is all finite, its
// largest error, its elements outside tolerance and those whose relative error could raise the
// maximum; only the sum of errors (its rounding depends on the order) and those few candidates
// go element by element. A block holding NaN or Inf takes step(). sum_rel is not kept here: only
// ErrorStat::kMean reads it. The sum of errors is added up in another order than step()'s, so
// mean_abs_error may differ from it in the last bits.
void ErrorAccumulator::float_blocks(const float* af, const float* ef) {
  constexpr int64_t kBlock = 512;
  double d_buf[kBlock];
  for (int64_t begin = 0; begin < r_.numel; begin += kBlock) {
    const int64_t n = std::min(kBlock, r_.numel - begin);
    const float* pa = af + begin;
    const float* pe = ef + begin;
    if (any_nonfinite(pa, pe, n)) {
      for (int64_t i = 0; i < n; ++i) step(begin + i, pa[i], pe[i]);
      continue;
    }
    const double rel_floor = r_.max_rel_error;  // only grows within the block
    const FloatBlock b = float_block(pa, pe, n, tol_, rel_floor, d_buf);
    int64_t candidates = b.candidates;
    sum_abs_ += b.sum_abs;
    finite_pairs_ += n;
    r_.mismatches += b.outside;
    if (r_.worst_index < 0 || b.max_abs > r_.max_abs_error) {
      int64_t first = 0;
      while (d_buf[first] != b.max_abs) ++first;
      r_.worst_index = begin + first;
      r_.max_abs_error = b.max_abs;
    }
    for (int64_t i = 0; candidates > 0 && i < n; ++i) {
      const double e = pe[i], d = d_buf[i];
      if (!(d > rel_floor * std::abs(e))) continue;
      --candidates;
      if (d > r_.max_rel_error * std::abs(e))
        r_.max_rel_error = std::max(
            r_.max_rel_error, e == 0 ? std::numeric_limits<double>::infinity() : d / std::abs(e));
    }
  }
}

// The mean and median errors, the verdict under the chosen statistic, and the reason it failed.
void ErrorAccumulator::finish() {
  if (finite_pairs_ > 0) r_.mean_abs_error = sum_abs_ / static_cast<double>(finite_pairs_);
  if (!abs_err_.empty()) {
    auto mid = abs_err_.begin() + static_cast<std::ptrdiff_t>(abs_err_.size() / 2);
    std::nth_element(abs_err_.begin(), mid, abs_err_.end());
    r_.median_abs_error = *mid;
  }
  if (stat_ == ErrorStat::kElemwise) {
    r_.pass = r_.mismatches == 0;
  } else {
    // A NaN/Inf pattern mismatch fails regardless of the statistic.
    const bool nonfinite_mismatch = std::isinf(r_.max_abs_error);
    double sa = 0, sr = 0;
    if (stat_ == ErrorStat::kMax) {
      sa = r_.max_abs_error;
      sr = r_.max_rel_error;
    } else if (finite_pairs_ > 0) {
      if (stat_ == ErrorStat::kMean) {
        sa = r_.mean_abs_error;
        sr = sum_rel_ / static_cast<double>(finite_pairs_);
      } else {
        sa = r_.median_abs_error;
        auto mid = rel_err_.begin() + static_cast<std::ptrdiff_t>(rel_err_.size() / 2);
        std::nth_element(rel_err_.begin(), mid, rel_err_.end());
        sr = *mid;
      }
    }
    r_.pass = !nonfinite_mismatch && (sa <= tol_.atol || sr <= tol_.rtol);
  }
  if (r_.pass || !r_.reason.empty()) return;
  char buf[160];
  if (stat_ == ErrorStat::kElemwise)
    std::snprintf(buf, sizeof buf, "%lld of %lld elements exceed atol %g + rtol %g * |expected|",
                  static_cast<long long>(r_.mismatches), static_cast<long long>(r_.numel),
                  tol_.atol, tol_.rtol);
  else
    std::snprintf(buf, sizeof buf, "the %s error exceeds atol %g and rtol %g",
                  error_stat_name(stat_).c_str(), tol_.atol, tol_.rtol);
  r_.reason = buf;
}

}  // namespace

TensorComparison compare_tensors(const Tensor& actual, const Tensor& expected, const Tolerance& tol,
                                 ErrorStat stat) {
  TensorComparison r;
  r.shape = actual.shape();
  r.numel = actual.numel();
  if (differ_in_kind(actual, expected, r)) return r;
  if (actual.dtype() == DType::kString) {
    compare_strings(actual, expected, r);
    return r;
  }
  ErrorAccumulator acc(r, actual, expected, tol, stat);
  const float* af = actual.dtype() == DType::kFloat ? actual.data<float>() : nullptr;
  const float* ef = expected.dtype() == DType::kFloat ? expected.data<float>() : nullptr;
  const bool same_integers =
      actual.dtype() == expected.dtype() && acc.blocks_apply() && tol.atol >= 0 && tol.rtol >= 0;
  if (af && ef && acc.blocks_apply()) {
    acc.float_blocks(af, ef);
  } else if (same_integers && actual.dtype() == DType::kUint8) {
    acc.integer_blocks(actual.data<uint8_t>(), expected.data<uint8_t>());
  } else if (same_integers && actual.dtype() == DType::kInt8) {
    acc.integer_blocks(actual.data<int8_t>(), expected.data<int8_t>());
  } else if (same_integers && actual.dtype() == DType::kInt32) {
    acc.integer_blocks(actual.data<int32_t>(), expected.data<int32_t>());
  } else if (same_integers && actual.dtype() == DType::kInt64) {
    acc.integer_blocks(actual.data<int64_t>(), expected.data<int64_t>());
  } else {
    for (int64_t i = 0; i < r.numel; ++i)
      acc.step(i, af ? af[i] : actual.get_as_double(i), ef ? ef[i] : expected.get_as_double(i));
  }
  acc.finish();
  return r;
}

Tolerance ToleranceSpec::for_output(const std::string& name) const {
  Tolerance t = default_tol;
  if (auto it = atol_by_output.find(name); it != atol_by_output.end()) t.atol = it->second;
  if (auto it = rtol_by_output.find(name); it != rtol_by_output.end()) t.rtol = it->second;
  return t;
}

namespace {
Status parse_one(const std::string& arg, const char* flag, double& def,
                 std::map<std::string, double>& by_name) {
  const auto colon = arg.rfind(':');
  const std::string num = colon == std::string::npos ? arg : arg.substr(colon + 1);
  char* end = nullptr;
  const double v = std::strtod(num.c_str(), &end);
  if (num.empty() || end != num.c_str() + num.size() || !(v >= 0))
    return invalid_argument(std::string(flag) + " value '" + arg +
                            "' is not a non-negative number (use VALUE or OUTPUT:VALUE)");
  if (colon == std::string::npos)
    def = v;
  else
    by_name[arg.substr(0, colon)] = v;
  return Status::ok();
}
}  // namespace

Status parse_tolerance_args(const std::vector<std::string>& atol,
                            const std::vector<std::string>& rtol, ToleranceSpec& spec) {
  for (const auto& a : atol)
    ODB_RETURN_IF_ERROR(parse_one(a, "--atol", spec.default_tol.atol, spec.atol_by_output));
  for (const auto& a : rtol)
    ODB_RETURN_IF_ERROR(parse_one(a, "--rtol", spec.default_tol.rtol, spec.rtol_by_output));
  return Status::ok();
}

}  // namespace onnxdbg
