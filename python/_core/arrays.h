// numpy arrays <-> onnxdbg Tensors for the Python binding: arrays go in without a copy when they
// are C-contiguous in native byte order (the Tensor adopts the array's buffer and keeps the
// array alive), and come out owning their Tensor's buffer (no copy either).
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <map>
#include <string>

#include "core/tensor.h"

namespace onnxdbg::python {

/// The Tensor over `array`'s buffer (no copy when it is C-contiguous, natively ordered and of a
/// numeric or bool dtype; otherwise a contiguous copy first). Strings (numpy str/object arrays)
/// are copied into a string tensor. Throws ValueError for dtypes ONNX has no type for.
Tensor to_tensor(const pybind11::handle& array, const std::string& name);

/// A numpy array owning `t`'s buffer (moved, not copied). bfloat16 tensors come out as float32
/// (numpy has no bfloat16), string tensors as object arrays of str.
pybind11::array to_array(Tensor&& t);

/// dict[str, ndarray] <-> TensorMap.
std::map<std::string, Tensor> to_tensor_map(const pybind11::dict& arrays);
pybind11::dict to_dict(std::map<std::string, Tensor>&& tensors);

}  // namespace onnxdbg::python
