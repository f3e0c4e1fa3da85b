// Tensor: a dense, row-major (C order) n-dimensional array with an ONNX element type.
// The buffer is owned by value; moving a Tensor is cheap, copying copies the data.
#pragma once

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "onnxdbg/dtype.h"
#include "onnxdbg/narrow_types.h"
#include "onnxdbg/status.h"

namespace onnxdbg {

/// Dimensions of a tensor, outermost first. A rank-0 tensor (scalar) has an empty Shape.
using Shape = std::vector<int64_t>;

/// Number of elements of `shape` (1 for a scalar). Errors: kInvalidArgument when a dim is
/// negative or the product overflows int64.
Expected<int64_t> shape_numel(const Shape& shape);
/// "1x3x224x224"; "scalar" for rank 0.
std::string shape_to_string(const Shape& shape);

/// Allocates `n` > 0 bytes for a tensor buffer, uninitialised. Buffers of 2 MiB or more are
/// aligned to 2 MiB and advised for transparent huge pages (madvise MADV_HUGEPAGE): a run
/// allocates and frees tensors of hundreds of megabytes, and with 4 KiB pages the kernel's page
/// faults and zeroing of fresh pages took about a third of a layerwise run's CPU time. Release
/// with release_tensor_bytes. Throws std::bad_alloc when the memory cannot be had (as operator
/// new). Buffers of 1 KiB to 64 KiB come in power-of-two sizes from a small per-thread cache of
/// released ones: a model of small tensors (an audio model's nodes) allocates and frees one per
/// node, and glibc's free of a chunk above its per-thread cache's 1 KiB merges it with its
/// neighbours every time (a tenth of such a run's instructions).
std::byte* allocate_tensor_bytes(size_t n);
/// Gives back a buffer of allocate_tensor_bytes (to the calling thread's cache, else std::free).
void release_tensor_bytes(std::byte* p) noexcept;

/// An owned byte buffer whose constructor leaves the bytes uninitialised (Tensor zero-fills
/// where it must), copied with memcpy and moved by pointer. Allocated by allocate_tensor_bytes,
/// or adopted from another owner (a numpy array the Python package passes in without a copy).
class ByteBuffer {
 public:
  /// Called once when an adopted buffer is released, with the owner given to adopt().
  using Release = void (*)(void* owner) noexcept;

  ByteBuffer() = default;
  explicit ByteBuffer(size_t n) : data_(n ? allocate_tensor_bytes(n) : nullptr), size_(n) {}
  /// A buffer over `n` bytes at `data` that someone else allocated: `release(owner)` is called
  /// instead of freeing them, once, when the buffer is destroyed (on whatever thread destroys
  /// it). Copies of it are ordinary owned buffers. `data` must stay valid and unchanged by
  /// others until then.
  static ByteBuffer adopt(std::byte* data, size_t n, Release release, void* owner) {
    ByteBuffer b;
    b.data_ = std::unique_ptr<std::byte[], Free>(data, Free{release, owner});
    b.size_ = n;
    return b;
  }
  ByteBuffer(const ByteBuffer& o) : ByteBuffer(o.size_) {
    if (size_) std::memcpy(data_.get(), o.data_.get(), size_);
  }
  ByteBuffer(ByteBuffer&& o) noexcept
      : data_(std::move(o.data_)), size_(std::exchange(o.size_, 0)) {}
  ByteBuffer& operator=(const ByteBuffer& o) {
    if (this != &o) *this = ByteBuffer(o);
    return *this;
  }
  ByteBuffer& operator=(ByteBuffer&& o) noexcept {
    data_ = std::move(o.data_);
    size_ = std::exchange(o.size_, 0);
    return *this;
  }
  std::byte* data() { return data_.get(); }
  const std::byte* data() const { return data_.get(); }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

 private:
  struct Free {
    // Constructors, not member initializers: unique_ptr must see Free as default-constructible
    // inside ByteBuffer's own definition.
    Free() noexcept {}  // NOLINT(modernize-use-equals-default)
    Free(Release r, void* o) noexcept : release(r), owner(o) {}
    Release release = nullptr;  // null: the bytes came from allocate_tensor_bytes
    void* owner = nullptr;
    void operator()(std::byte* p) const noexcept {
      if (release)
        release(owner);
      else
        release_tensor_bytes(p);
    }
  };
  std::unique_ptr<std::byte[], Free> data_;
  size_t size_ = 0;
};

class Tensor {
 public:
  Tensor() = default;
  /// A zero-filled tensor. The caller guarantees the shape is valid (see Tensor::make).
  Tensor(DType dtype, Shape shape);
  /// Checked constructor: errors with kInvalidArgument on negative dims or element counts whose
  /// byte size overflows, and kUnsupported for kUndefined.
  static Expected<Tensor> make(DType dtype, Shape shape);
  /// As make(), but the elements of a non-string tensor are left unspecified: for kernels that
  /// write every element, saving the zero fill of a large buffer.
  static Expected<Tensor> make_uninitialized(DType dtype, Shape shape);
  /// A tensor over `buffer` (ByteBuffer::adopt: memory owned elsewhere, not copied). Errors:
  /// those of make(), and kInvalidArgument when the buffer's size is not numel * element size
  /// or the dtype is kString (string values are not bytes).
  static Expected<Tensor> adopt(DType dtype, Shape shape, ByteBuffer buffer);
  /// A tensor holding a copy of `values` with the given shape (numel must match).
  template <class T>
  static Tensor from_vector(Shape shape, const std::vector<T>& values);
  /// A rank-0 tensor.
  template <class T>
  static Tensor scalar(T v) {
    return from_vector<T>({}, {v});
  }

  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  int64_t rank() const { return static_cast<int64_t>(shape_.size()); }
  int64_t dim(int64_t i) const { return shape_[static_cast<size_t>(i)]; }
  int64_t numel() const { return numel_; }
  /// Bytes of the element buffer (0 for string tensors, whose values live in strings()).
  size_t nbytes() const { return data_.size(); }
  bool empty() const { return dtype_ == DType::kUndefined; }

  /// Typed access; T must match dtype() (checked by assertion).
  template <class T>
  T* data() {
    assert(DTypeOf<T>::value == dtype_);
    return reinterpret_cast<T*>(data_.data());
  }
  template <class T>
  const T* data() const {
    assert(DTypeOf<T>::value == dtype_);
    return reinterpret_cast<const T*>(data_.data());
  }
  std::byte* raw() { return data_.data(); }
  const std::byte* raw() const { return data_.data(); }
  /// Values of a string tensor (dtype kString), numel() of them.
  std::vector<std::string>& strings() { return strings_; }
  const std::vector<std::string>& strings() const { return strings_; }

  /// The same data with another shape of equal element count. Errors: kInvalidArgument.
  Expected<Tensor> reshaped(Shape shape) const&;
  /// As above, moving the buffer instead of copying it.
  Expected<Tensor> reshaped(Shape shape) &&;
  /// Reads element i (flat index) as double, whatever the numeric dtype (bool gives 0/1; the
  /// narrow types give their exact value, see onnxdbg/narrow_types.h).
  double get_as_double(int64_t i) const;
  /// Writes element i from a double, converting (rounding toward zero for integers, round to
  /// nearest even for float16/bfloat16 and the narrow floats, which saturate; int4/int2 wrap).
  void set_from_double(int64_t i, double v);

 private:
  DType dtype_ = DType::kUndefined;
  Shape shape_;
  int64_t numel_ = 0;
  struct Uninitialized {};
  Tensor(DType dtype, Shape shape, Uninitialized);
  ByteBuffer data_;
  std::vector<std::string> strings_;
};

/// Converts `t` to `to` element by element with ONNX Cast semantics (float to int truncates
/// toward zero; to bool is "!= 0"; strings parse/print numbers; to a narrow type by `narrow`'s
/// saturate and rounding, see narrow_from_double). Errors: kUnsupported for complex types,
/// kInvalidArgument for unparsable strings.
Expected<Tensor> cast_tensor(const Tensor& t, DType to, const NarrowCast& narrow = {});

template <class T>
Tensor Tensor::from_vector(Shape shape, const std::vector<T>& values) {
  Tensor t(DTypeOf<T>::value, std::move(shape));
  assert(static_cast<int64_t>(values.size()) == t.numel());
  if constexpr (std::is_same_v<T, std::string>) {
    t.strings_ = values;
  } else if constexpr (std::is_same_v<T, bool>) {
    for (size_t i = 0; i < values.size(); ++i) t.data<bool>()[i] = values[i];
  } else {
    if (!values.empty()) std::memcpy(t.data_.data(), values.data(), values.size() * sizeof(T));
  }
  return t;
}

/// Tensors by name (graph inputs or outputs).
using TensorMap = std::map<std::string, Tensor>;

}  // namespace onnxdbg
