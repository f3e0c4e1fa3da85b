// short_number and max_abs_error_text (see error_text.h).
#include "compare/error_text.h"

#include <cmath>
#include <cstdio>

namespace onnxdbg {

std::string short_number(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

std::string max_abs_error_text(const TensorComparison& r) {
  // In a low-precision type, the error in the type's own steps says more than its size.
  std::string text = short_number(r.max_abs_error);
  if (r.step_dtype == DType::kUndefined || !(r.max_error_steps > 0) ||
      !std::isfinite(r.max_abs_error))
    return text;
  const char* unit = r.quant_scale > 0 ? " quantization step" : " step";
  text += " (" + short_number(r.max_error_steps) + " " + std::string(dtype_name(r.step_dtype)) +
          unit + (r.max_error_steps == 1 ? "" : "s");
  if (r.quant_scale > 0)
    text += ", " + short_number(r.max_abs_error * r.quant_scale) + " dequantized";
  return text + ")";
}

}  // namespace onnxdbg
