// numpy <-> Tensor conversions of the binding (see arrays.h).
#include "arrays.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <utility>

namespace py = pybind11;

namespace onnxdbg::python {
namespace {

/// Releases the array an adopted Tensor buffer kept alive; the Tensor may die on any thread.
void release_array(void* owner) noexcept {
  try {
    py::gil_scoped_acquire gil;
    Py_DECREF(static_cast<PyObject*>(owner));
  } catch (...) {
    // The interpreter is gone (a tensor outlived it): nothing is left to release.
  }
}

// The dtype's kind and size are read as Python attributes, not from numpy's C struct, whose
// layout NumPy 2 changed (older pybind11 reads the old one).
DType dtype_of(const py::dtype& dt, const std::string& name) {
  const std::string kind_str = py::str(dt.attr("kind"));
  const auto size = dt.attr("itemsize").cast<py::ssize_t>();
  switch (kind_str.empty() ? '?' : kind_str[0]) {
    case 'b':
      return DType::kBool;
    case 'f':
      if (size == 2) return DType::kFloat16;
      if (size == 4) return DType::kFloat;
      if (size == 8) return DType::kDouble;
      break;
    case 'i':
      if (size == 1) return DType::kInt8;
      if (size == 2) return DType::kInt16;
      if (size == 4) return DType::kInt32;
      if (size == 8) return DType::kInt64;
      break;
    case 'u':
      if (size == 1) return DType::kUint8;
      if (size == 2) return DType::kUint16;
      if (size == 4) return DType::kUint32;
      if (size == 8) return DType::kUint64;
      break;
    case 'c':
      if (size == 8) return DType::kComplex64;
      if (size == 16) return DType::kComplex128;
      break;
    case 'U':
    case 'S':
    case 'O':
      return DType::kString;
    default:
      break;
  }
  // ml_dtypes' types (kind 'V', or 'f' with size 1 for float8_e5m2) are known by their names,
  // which are onnxdbg's own: bfloat16, float8_e4m3fn, int4, ...
  const std::string dt_name = py::str(dt.attr("name"));
  if (auto named = dtype_from_name(dt_name);
      named && dtype_name(*named) == dt_name &&
      static_cast<py::ssize_t>(dtype_size(*named)) == size &&
      (*named == DType::kBFloat16 || is_narrow_float(*named) || is_narrow_integer(*named)))
    return *named;
  throw py::value_error("input '" + name + "': numpy dtype " + dt_name +
                        " has no ONNX element type");
}

Shape shape_of(const py::array& a) {
  Shape s;
  for (py::ssize_t i = 0; i < a.ndim(); ++i) s.push_back(static_cast<int64_t>(a.shape(i)));
  return s;
}

}  // namespace

Tensor to_tensor(const py::handle& obj, const std::string& name) {
  py::array a = py::array::ensure(obj);
  if (!a) throw py::type_error("input '" + name + "' is not convertible to a numpy array");
  const DType dtype = dtype_of(a.dtype(), name);
  if (dtype == DType::kString) {
    auto t = Tensor::make(DType::kString, shape_of(a));
    if (!t) throw py::value_error("input '" + name + "': " + t.status().message());
    py::list flat = a.attr("ravel")().attr("tolist")();
    for (size_t i = 0; i < flat.size(); ++i)
      t->strings()[i] = py::isinstance<py::bytes>(flat[i]) ? flat[i].cast<std::string>()
                                                           : py::str(flat[i]).cast<std::string>();
    return std::move(*t);
  }
  // C order and native byte order, else one contiguous copy (numpy's ascontiguousarray).
  const bool native = a.dtype().attr("isnative").cast<bool>();
  if (!(a.flags() & py::array::c_style) || !native)
    a = py::module_::import("numpy").attr("ascontiguousarray")(a,
                                                               a.dtype().attr("newbyteorder")("="));
  Shape shape = shape_of(a);
  const auto bytes = a.attr("nbytes").cast<size_t>();
  if (dtype_bits(dtype) < 8) {
    // A sub-byte type's array may hold bits above its width (a uint8 array viewed as int4): the
    // Tensor gets a masked copy, so that every byte is the element's code.
    const auto* p = static_cast<const uint8_t*>(a.data());
    const auto mask = static_cast<uint8_t>((1u << dtype_bits(dtype)) - 1);
    if (std::any_of(p, p + bytes, [mask](uint8_t b) { return (b & ~mask) != 0; })) {
      Tensor t(dtype, std::move(shape));
      std::memcpy(t.raw(), p, bytes);
      mask_narrow_codes(dtype, reinterpret_cast<uint8_t*>(t.raw()), bytes);
      return t;
    }
  }
  PyObject* owner = a.ptr();
  Py_INCREF(owner);  // released by release_array when the Tensor's buffer dies
  auto* data = static_cast<std::byte*>(const_cast<void*>(a.data()));
  auto t =
      Tensor::adopt(dtype, std::move(shape), ByteBuffer::adopt(data, bytes, release_array, owner));
  if (!t) throw py::value_error("input '" + name + "': " + t.status().message());
  return std::move(*t);
}

py::array to_array(Tensor&& t) {
  if (t.dtype() == DType::kString) {
    py::list values;
    for (const auto& s : t.strings()) values.append(py::str(s));
    py::array flat = py::module_::import("numpy").attr("array")(values, "object");
    return flat.attr("reshape")(py::tuple(py::cast(t.shape())));
  }
  if (t.dtype() == DType::kBFloat16) {
    auto f = cast_tensor(t, DType::kFloat);
    if (!f) throw std::runtime_error(f.status().message());
    return to_array(std::move(*f));
  }
  if (t.dtype() == DType::kUndefined) throw std::runtime_error("a tensor of undefined type");
  const std::string np(dtype_name(t.dtype()));  // onnxdbg's dtype names are numpy's or ml_dtypes'
  if (is_narrow_float(t.dtype()) || is_narrow_integer(t.dtype())) {
    // numpy knows these types by name once ml_dtypes has registered them. Unlike bfloat16 they
    // are not widened: a float32 array would hide the type, and an int8 one its range.
    try {
      py::module_::import("ml_dtypes");
    } catch (const py::error_already_set& e) {
      if (!e.matches(PyExc_ImportError)) throw;
      throw py::type_error("a tensor of element type " + np +
                           " needs the ml_dtypes package for its numpy dtype: pip install "
                           "ml_dtypes");
    }
  }
  std::vector<py::ssize_t> shape(t.shape().begin(), t.shape().end());
  if (t.nbytes() == 0)  // nothing to share: numpy makes the empty array
    return py::module_::import("numpy").attr("empty")(py::tuple(py::cast(shape)), np);
  // C-order strides from onnxdbg's element size: pybind11 2.10 would read the size from
  // numpy's descriptor struct, whose layout NumPy 2 changed (it read 0: every element the first).
  std::vector<py::ssize_t> strides(shape.size());
  py::ssize_t step = static_cast<py::ssize_t>(dtype_size(t.dtype()));
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = step;
    step *= shape[i];
  }
  auto* owner = new Tensor(std::move(t));
  py::capsule base(owner, [](void* p) { delete static_cast<Tensor*>(p); });
  return py::array(py::dtype(np), shape, strides, static_cast<void*>(owner->raw()), base);
}

std::map<std::string, Tensor> to_tensor_map(const py::dict& arrays) {
  std::map<std::string, Tensor> out;
  for (const auto& [k, v] : arrays) {
    const std::string name = py::str(k).cast<std::string>();
    out.insert_or_assign(name, to_tensor(v, name));
  }
  return out;
}

py::dict to_dict(std::map<std::string, Tensor>&& tensors) {
  py::dict d;
  for (auto& [name, t] : tensors) d[py::str(name)] = to_array(std::move(t));
  tensors.clear();
  return d;
}

}  // namespace onnxdbg::python
