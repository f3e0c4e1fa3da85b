// Direct convolution of float16 operands in float32 (conv_direct.cpp): Conv's float16 path for 1-D
// and 2-D convolutions, without the whole-tensor casts and the im2col matrix of the float32 path.
#pragma once

#include <cstdint>
#include <vector>

#include "onnxdbg/status.h"
#include "onnxdbg/tensor.h"
#include "reference/ops/conv_common.h"

namespace onnxdbg::reference {

/// The vector instruction sets conv_direct_float16 picks from, slowest first. Each computes every
/// output element by the same sequence of float32 fused multiply-adds, so all give the same bits.
enum class DirectConvIsa { kScalar, kAvx2, kAvx512 };

/// The instruction set's name as tests and benchmarks print it ("scalar", "avx2", "avx512").
const char* direct_conv_isa_name(DirectConvIsa isa);

/// The instruction sets this CPU runs, slowest first (kScalar always; kAvx2 needs AVX2, FMA and
/// F16C; kAvx512 needs AVX-512 F as well).
std::vector<DirectConvIsa> direct_conv_isas_available();

/// Caps the instruction set conv_direct_float16 uses at `limit` (kAvx512, the default, caps
/// nothing), so that tests also run the ones slower CPUs take. Not for use while a model runs.
void set_direct_conv_isa_limit(DirectConvIsa limit);

/// True when conv_direct_float16 computes a convolution of this geometry: 1 or 2 spatial dims, not
/// the grouped one-input-channel-per-group (depthwise) form conv_forward loops over directly, a
/// last-dim stride of at most 4, and a padded copy of each input channel at most four times its
/// size plus 4,096 elements (`c` input channels, `group` groups).
bool conv_direct_applies(const SpatialGeometry& g, int64_t c, int64_t group);

/// ONNX Conv (Conv-1, Conv-11) on float16 X [n, c, g.in...], W [m, c / group, g.kernel...] and
/// the optional bias B [m] (null for none) into the float16 output y [n, m, g.out...], allocated by
/// the caller. Every output element is the float32 sum over the kernel taps in (input channel,
/// kernel row, kernel column) order of w * x, one fused multiply-add at a time from 0 (taps in the
/// padding add w * 0), plus the bias, rounded once to float16 (round to nearest even): ONNX's
/// float16 semantics (compute in float32, round the result) as the interpreter's float32 path
/// gives them, to within the float32 summation order (OpenBLAS's, which varies with its CPU
/// kernel, there; this fixed one here, on every CPU and thread count). Needs
/// conv_direct_applies(g, c, group) and `group` dividing c and m (the caller checks). Errors: the
/// run limits' error when the run is cancelled or out of time; a band's padded rows or the packed
/// weights that do not fit in memory throw std::bad_alloc, which the interpreter reports as the
/// node's out-of-memory error.
Status conv_direct_float16(const Tensor& x, const Tensor& w, const Tensor* bias, int64_t group,
                           const SpatialGeometry& g, Tensor& y);

}  // namespace onnxdbg::reference
