// How a comparison's largest error is stated in words, once for every rendering: the run and
// layerwise tables, run's verdict line and the viewer's node panel say the same thing.
#pragma once

#include <string>

#include "onnxdbg/compare.h"

namespace onnxdbg {

/// A number with 3 significant digits ("%.3g"), "nan", "inf" and "-inf" spelled out: how every
/// report prints an error or a tolerance.
std::string short_number(double v);

/// The max abs error with 3 significant digits ("nan", "inf" as such) and, in a low-precision
/// type, its size in the type's steps: "0.25 (2 float8_e4m3fn steps)" (TensorComparison::
/// step_dtype); for a quantized tensor (mark_quantized) in quantization steps and dequantized
/// units: "3 (3 uint8 quantization steps, 0.06 dequantized)".
std::string max_abs_error_text(const TensorComparison& r);

}  // namespace onnxdbg
