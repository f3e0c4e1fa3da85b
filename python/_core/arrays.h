// numpy arrays <-> onnxdbg Tensors for the Python binding: arrays go in without a copy when they
// are C-contiguous in native byte order (the Tensor adopts the array's buffer and keeps the
// array alive), and come out owning their Tensor's buffer (no copy either).
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <map>
#include <string>

#include "onnxdbg/tensor.h"

namespace onnxdbg::python {

/// The Tensor over `array`'s buffer (no copy when it is C-contiguous, natively ordered and of a
/// numeric or bool dtype; otherwise a contiguous copy first). Strings (numpy str/object arrays)
/// are copied into a string tensor. ml_dtypes arrays (bfloat16, float8_e4m3fn, int4, ...) give
/// the ONNX type of that name (the bits above a narrow type's width are cleared in a copy).
/// Throws ValueError for dtypes ONNX has no type for.
Tensor to_tensor(const pybind11::handle& array, const std::string& name);

/// A numpy array owning `t`'s buffer (moved, not copied). bfloat16 tensors come out as float32
/// (numpy has no bfloat16), string tensors as object arrays of str. The narrow types (float8,
/// float4, float6, int4, uint4, int2, uint2) come out as arrays of ml_dtypes' dtype of the same
/// name, one byte per element; TypeError ("pip install ml_dtypes") when it cannot be imported.
pybind11::array to_array(Tensor&& t);

/// dict[str, ndarray] <-> TensorMap.
std::map<std::string, Tensor> to_tensor_map(const pybind11::dict& arrays);
pybind11::dict to_dict(std::map<std::string, Tensor>&& tensors);

}  // namespace onnxdbg::python
