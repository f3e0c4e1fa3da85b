// Shared code for Cast and CastLike: ONNX Cast semantics over every element type (core
// cast_tensor), the narrow-type attributes of Cast-19/24 (saturate, round_mode), and numbers
// printed as strings the way numpy prints them (shortest round trip).
#pragma once

#include <charconv>
#include <string>

#include "onnxdbg/narrow_types.h"
#include "onnxdbg/tensor.h"
#include "reference/kernel.h"

namespace onnxdbg::reference {

/// The conversion options of a Cast/CastLike node: attribute `saturate` (Cast-19 on, default 1;
/// it concerns float8 and float8e8m0 targets) and, when `with_round_mode` (Cast-24 on),
/// `round_mode` ("up", the default, "down" or "nearest"; it concerns float8e8m0 targets).
/// Errors: kModelError naming the node for any other round_mode.
inline Expected<NarrowCast> read_narrow_cast(const KernelContext& ctx, bool with_round_mode) {
  NarrowCast opts;
  opts.saturate = ctx.attr_int("saturate", 1) != 0;
  if (!with_round_mode) return opts;
  const std::string mode = ctx.attr_string("round_mode", "up");
  if (mode == "up") {
    opts.e8m0 = E8M0Rounding::kUp;
  } else if (mode == "down") {
    opts.e8m0 = E8M0Rounding::kDown;
  } else if (mode == "nearest") {
    opts.e8m0 = E8M0Rounding::kNearest;
  } else {
    return model_error(ctx.describe() + ": attribute round_mode must be \"up\", \"down\" or " +
                       "\"nearest\", got \"" + mode + "\"");
  }
  return opts;
}

/// `x` converted to `to`. Float to integer truncates toward zero; to bool is x != 0; strings parse
/// as numbers. Conversions to the narrow types follow `narrow` (see narrow_from_double).
/// Float-to-string uses the shortest text that reads back to the same value ("0.1", "nan",
/// "inf"), as numpy's str() does; narrow floats print the shortest float32 text of their value.
/// Errors: as cast_tensor.
inline Expected<Tensor> cast_for_onnx(const Tensor& x, DType to, const NarrowCast& narrow = {}) {
  if (x.dtype() == DType::kString && (is_narrow_float(to) || is_narrow_integer(to))) {
    // Parse first, so that saturate and round_mode apply as for a numeric input.
    ODB_ASSIGN_OR_RETURN(Tensor d, cast_tensor(x, DType::kDouble));
    return cast_tensor(d, to, narrow);
  }
  if (to != DType::kString || x.dtype() == DType::kString) return cast_tensor(x, to, narrow);
  ODB_ASSIGN_OR_RETURN(Tensor out, Tensor::make(DType::kString, x.shape()));
  char buf[64];
  for (int64_t i = 0; i < x.numel(); ++i) {
    std::to_chars_result r{};
    switch (x.dtype()) {
      case DType::kFloat:
        r = std::to_chars(buf, buf + sizeof(buf), x.data<float>()[i]);
        break;
      case DType::kDouble:
        r = std::to_chars(buf, buf + sizeof(buf), x.data<double>()[i]);
        break;
      case DType::kFloat16:
      case DType::kBFloat16:
        r = std::to_chars(buf, buf + sizeof(buf), static_cast<float>(x.get_as_double(i)));
        break;
      case DType::kInt64:
        r = std::to_chars(buf, buf + sizeof(buf), x.data<int64_t>()[i]);
        break;
      case DType::kUint64:
        r = std::to_chars(buf, buf + sizeof(buf), x.data<uint64_t>()[i]);
        break;
      case DType::kBool:
        r = std::to_chars(buf, buf + sizeof(buf), x.data<bool>()[i] ? 1 : 0);
        break;
      default:
        if (is_narrow_float(x.dtype())) {  // every narrow float value is exact in a float32
          r = std::to_chars(buf, buf + sizeof(buf), static_cast<float>(x.get_as_double(i)));
        } else {  // the other integers (int4/int2 included) are exact in a double
          r = std::to_chars(buf, buf + sizeof(buf), static_cast<int64_t>(x.get_as_double(i)));
        }
        break;
    }
    out.strings()[static_cast<size_t>(i)] = std::string(buf, r.ptr);
  }
  return out;
}

}  // namespace onnxdbg::reference
