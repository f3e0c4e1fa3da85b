// Comparing tensors with tolerances: absolute and relative error, mismatch counts, NaN/Inf
// accounting. The pass rule follows numpy.allclose (as the ONNX backend tests do):
// an element passes when |actual - expected| <= atol + rtol * |expected|; NaN equals NaN.
#pragma once

#include <map>
#include <string>

#include "onnxdbg/enum_names.h"
#include "onnxdbg/options.h"
#include "onnxdbg/status.h"
#include "onnxdbg/tensor.h"

namespace onnxdbg {

/// Absolute and relative tolerance; both are non-negative, unitless (in the tensor's units).
struct Tolerance {
  double atol = option_defaults::atol;  ///< include/onnxdbg/options.def
  double rtol = option_defaults::rtol;
};

/// Which statistic of the per-element error decides pass/fail (Polygraphy's --check-error-stat):
/// kElemwise checks every element with the allclose rule; kMax/kMean/kMedian pass when the
/// statistic of the absolute error is <= atol or that of the relative error is <= rtol.
enum class ErrorStat { kElemwise, kMax, kMean, kMedian };
inline constexpr EnumNames<ErrorStat, 4> kErrorStatNames{{{ErrorStat::kElemwise, "elemwise"},
                                                          {ErrorStat::kMax, "max"},
                                                          {ErrorStat::kMean, "mean"},
                                                          {ErrorStat::kMedian, "median"}}};
/// The statistic named `name` (kErrorStatNames). Errors: kInvalidArgument naming the valid ones.
Expected<ErrorStat> error_stat_from_name(const std::string& name);
std::string error_stat_name(ErrorStat s);  ///< "elemwise" | "max" | "mean" | "median"

struct TensorComparison {
  bool pass = false;
  std::string reason;  ///< why it failed in words ("shape 1x2 vs 1x3", "3 of 10 elements ...")
  Shape shape;         ///< shape of `actual`
  int64_t numel = 0;
  double max_abs_error = 0;  ///< max |a - e| over finite pairs
  double max_rel_error = 0;  ///< max |a - e| / |e| over finite pairs (|e| > 0)
  double mean_abs_error = 0;
  double median_abs_error = 0;  ///< computed for ErrorStat::kMedian only (0 otherwise)
  int64_t mismatches = 0;       ///< elements failing the allclose rule (NaN/Inf pattern included)
  int64_t worst_index = -1;     ///< flat index of the largest absolute error
  int64_t nan_or_inf_actual = 0;
  int64_t nan_or_inf_expected = 0;
  /// The low-precision type errors are also counted in: `actual`'s type when it is float16,
  /// bfloat16 or a narrow type (float8, float4, float6, float8e8m0, int4, int2), else
  /// `expected`'s when it is one; kUndefined otherwise (float32, float64 and integer tensors).
  DType step_dtype = DType::kUndefined;
  /// Largest |a - e| over finite pairs in units of step_dtype's step at e (dtype_step: the
  /// spacing of representable values there): 1 means "one rounding step of the type", however
  /// large that is in absolute terms. 0 when step_dtype is kUndefined.
  double max_error_steps = 0;
  /// For a quantized integer tensor (QuantizeLinear's output and the like, see
  /// model/quantization.h): its scale, so that max_abs_error (in integer steps: one unit is one
  /// quantization step) times it is the error in the dequantized values. 0 when not quantized or
  /// the scale is not one known value.
  double quant_scale = 0;
};

/// Marks `r`, the comparison of a quantized integer tensor with scale `scale` (> 0): its errors
/// count in quantization steps (step_dtype = `dtype`, max_error_steps = max_abs_error) and
/// quant_scale = scale. No-op for a scale <= 0 or a non-integer `dtype`.
void mark_quantized(TensorComparison& r, DType dtype, double scale);

/// True for the types compare_tensors counts errors in steps of (see step_dtype).
bool is_low_precision(DType t);

/// Compares `actual` with `expected` (the golden value). Shapes must match exactly (a rank-0
/// versus 1-element tensor is a mismatch with a reason); dtypes may differ (each element is
/// converted exactly to double and compared there, e.g. float16 vs float32 outputs of two
/// precisions, or float8 against float32). Strings compare for equality.
TensorComparison compare_tensors(const Tensor& actual, const Tensor& expected, const Tolerance& tol,
                                 ErrorStat stat = ErrorStat::kElemwise);

/// Per-output tolerances: a default plus overrides by output name (from "--atol name:1e-3").
struct ToleranceSpec {
  Tolerance default_tol;
  std::map<std::string, double> atol_by_output;
  std::map<std::string, double> rtol_by_output;
  Tolerance for_output(const std::string& name) const;
};

/// Parses values of --atol/--rtol: "1e-4" sets the default, "name:1e-3" one output (the last
/// ':' separates, so tensor names with ':' work). Errors: kInvalidArgument for non-numbers or
/// negative values.
Status parse_tolerance_args(const std::vector<std::string>& atol,
                            const std::vector<std::string>& rtol, ToleranceSpec& spec);

/// Counts NaN and Inf elements of a floating tensor, narrow floats included (0 for others).
int64_t count_nan_or_inf(const Tensor& t);

}  // namespace onnxdbg
