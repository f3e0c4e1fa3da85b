// A tensor's axes permuted (numpy.transpose, ONNX Transpose) as a new dense tensor, for data
// that comes in another axis order than the model's (a TensorFlow dump's NHWC golden values).
#pragma once

#include <cstdint>
#include <vector>

#include "onnxdbg/status.h"
#include "onnxdbg/tensor.h"

namespace onnxdbg {

/// Whether `perm` is a permutation of 0..rank-1 (each axis once).
bool is_axis_permutation(const std::vector<int64_t>& perm, size_t rank);

/// `x` with its axes permuted, as numpy.transpose(x, perm) and ONNX Transpose (spec: Operators.md
/// "Transpose"): out.shape[i] = x.shape[perm[i]], and the element at out index (i_0, ..., i_r-1)
/// is x's at the index whose axis perm[k] is i_k. Any dtype (the elements' bytes are copied;
/// strings copied as strings); a rank-0 or 1 tensor, or the identity, comes back as a copy. The
/// one allocation is the result, of x's own size. Errors: kInvalidArgument when `perm` is not a
/// permutation of x's axes (named with x's shape); those of Tensor::make_uninitialized (a result
/// beyond the run's memory limit, core/run_limits.h).
Expected<Tensor> transpose_axes(const Tensor& x, const std::vector<int64_t>& perm);

}  // namespace onnxdbg
