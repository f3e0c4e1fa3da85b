// The narrow element types of ONNX IR 10-13 (onnx.proto TensorProto.DataType 17-28): float8 in
// four kinds (E4M3FN, E4M3FNUZ, E5M2, E5M2FNUZ; "FP8 Formats for Deep Learning",
// arXiv:2209.05433, and Graphcore's FNUZ variants), float8e8m0 (the OCP Microscaling scale
// type), float4e2m1 and float6 (OCP MX element types), and int4/uint4/int2/uint2.
//
// In memory (a Tensor) each element is one byte holding its code in the low bits, the upper bits
// zero, as ml_dtypes lays these types out in numpy. In a TensorProto's raw_data, in external data
// and in ONNX Runtime's buffers the 4-, 2- and 6-bit types are packed: element i occupies bits
// [b*i, b*i + b) of the little-endian bit stream (ONNX IR spec, "Tensor Element Types"), which
// pack_narrow / unpack_narrow convert.
#pragma once

#include <cstddef>
#include <cstdint>

#include "onnxdbg/dtype.h"

namespace onnxdbg {

/// How a value is rounded to float8e8m0 (Cast-24's `round_mode`): "up" (the default) to the next
/// power of two unless exact, "down" truncates the mantissa, "nearest" rounds up from half.
enum class E8M0Rounding { kUp, kDown, kNearest };

/// Options of a conversion to a narrow type (Cast-19/24 attributes).
struct NarrowCast {
  /// Float8 and float8e8m0: out-of-range values and infinities become the largest finite value
  /// (true) or NaN/infinity per the Cast spec's table (false). float4/float6 always saturate.
  bool saturate = true;
  E8M0Rounding e8m0 = E8M0Rounding::kUp;
};

/// The value of element code `code` (low bits of the byte) of narrow type `t` as a double: exact
/// for every code. NaN codes give NaN, E5M2's infinities give infinities; int4/int2 codes are
/// sign-extended two's complement. Precondition: is_narrow_float(t) || is_narrow_integer(t).
double narrow_to_double(DType t, uint8_t code);

/// The code of `v` in narrow type `t`, by the ONNX Cast rules (operator spec "Cast", version 25):
/// floats round to nearest even and follow the saturate table (E4M3FN/E5M2 keep the sign of
/// zero, the FNUZ kinds have no negative zero, NaN becomes the type's NaN, or negative zero in
/// float4/float6, which have none); float8e8m0 takes the float32 exponent and rounds by
/// `opts.e8m0`; int4/uint4/int2/uint2 truncate toward zero and wrap around (as numpy with
/// ml_dtypes does; NaN and infinities give 0).
uint8_t narrow_from_double(DType t, double v, NarrowCast opts = {});

/// The distance from |v| to the next representable value of `t` above it (the type's step, or
/// unit in the last place, at v): used to state an error "in steps". 1 for the integer types;
/// for float types the spacing of the binade v lies in (the subnormal spacing below the smallest
/// normal). Returns 0 for string, bool and complex types and for non-finite v.
double dtype_step(DType t, double v);

/// Packs `n` element codes (one per byte) of `t` into dtype_storage_bytes(t, n) bytes at `out`.
/// For types that are not sub-byte it copies the bytes.
void pack_narrow(DType t, const uint8_t* codes, int64_t n, uint8_t* out);

/// Unpacks `n` elements of `t` from `packed` (dtype_storage_bytes(t, n) bytes) into one code per
/// byte at `codes`. For types that are not sub-byte it copies the bytes.
void unpack_narrow(DType t, const uint8_t* packed, int64_t n, uint8_t* codes);

/// Masks every byte of a narrow-type buffer to the bits the type has (an int4 byte 0xF3 reads as
/// code 3): a file or a numpy array may carry other bits above them. No-op for other types.
void mask_narrow_codes(DType t, uint8_t* codes, size_t n);

}  // namespace onnxdbg
