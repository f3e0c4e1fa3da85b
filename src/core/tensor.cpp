// Tensor storage, shape arithmetic with overflow checks, and ONNX Cast conversion.
#include "onnxdbg/tensor.h"

#include <malloc.h>
#include <sys/mman.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>
#include <sstream>
#include <type_traits>

#include "core/run_limits.h"
#include "onnxdbg/narrow_types.h"

namespace onnxdbg {

Expected<int64_t> shape_numel(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0)
      return invalid_argument("negative dimension " + std::to_string(d) + " in shape " +
                              shape_to_string(shape));
    if (d != 0 && n > std::numeric_limits<int64_t>::max() / d)
      return invalid_argument("shape " + shape_to_string(shape) + " has too many elements");
    n *= d;
  }
  return n;
}

std::string shape_to_string(const Shape& shape) {
  if (shape.empty()) return "scalar";
  std::string s;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += 'x';
    s += std::to_string(shape[i]);
  }
  return s;
}

namespace {

/// Released tensor buffers of 1 KiB << c bytes (c < kClasses), kept for the next allocation of
/// that class on the same thread; freed when the thread ends.
class BufferCache {
 public:
  static constexpr size_t kMin = 1024;
  static constexpr int kClasses = 7;  // 1 KiB .. 64 KiB
  static constexpr size_t kPerClass = 8;

  /// The class of an allocation of `n` bytes, or -1 when the cache does not take such sizes.
  static int class_of(size_t n) {
    if (n <= kMin / 2 || n > (kMin << (kClasses - 1))) return -1;
    int c = 0;
    while ((kMin << c) < n) ++c;
    return c;
  }
  static size_t size_of(int c) { return kMin << c; }

  void* take(int c) {
    auto& list = free_[c];
    if (count_[c] == 0) return nullptr;
    return list[--count_[c]];
  }
  bool give(void* p) {
    const size_t usable = malloc_usable_size(p);
    // The class whose size the chunk holds (a chunk of class c holds at least size_of(c)).
    int c = -1;
    for (int k = kClasses - 1; k >= 0; --k)
      if (usable >= size_of(k)) {
        c = k;
        break;
      }
    if (c < 0 || usable >= 2 * size_of(kClasses - 1) || count_[c] == kPerClass) return false;
    free_[c][count_[c]++] = p;
    return true;
  }
  ~BufferCache();

 private:
  void* free_[kClasses][kPerClass] = {};
  size_t count_[kClasses] = {};
};

thread_local BufferCache buffer_cache;
// Set when the thread's cache is gone (thread exit): buffers released later (tensors destroyed by
// other thread-exit or static destructors) are freed directly. Trivially destructible, so it can
// be read at any point of the thread's exit.
thread_local bool buffer_cache_gone = false;

BufferCache::~BufferCache() {
  buffer_cache_gone = true;
  for (int c = 0; c < kClasses; ++c)
    for (size_t k = 0; k < count_[c]; ++k) std::free(free_[c][k]);
}

}  // namespace

void release_tensor_bytes(std::byte* p) noexcept {
  if (p && (buffer_cache_gone || !buffer_cache.give(p))) std::free(p);
}

std::byte* allocate_tensor_bytes(size_t n) {
  constexpr size_t kHugePage = size_t{2} << 20;
  void* p = nullptr;
  if (const int c = BufferCache::class_of(n); c >= 0 && !buffer_cache_gone) {
    p = buffer_cache.take(c);
    if (!p) p = std::malloc(BufferCache::size_of(c));
  } else if (n >= kHugePage) {
    const size_t rounded = (n + kHugePage - 1) / kHugePage * kHugePage;
    p = std::aligned_alloc(kHugePage, rounded);
    if (p) madvise(p, rounded, MADV_HUGEPAGE);  // advice only: failure changes nothing
  } else {
    p = std::malloc(n);
  }
  if (!p) throw std::bad_alloc();
  return static_cast<std::byte*>(p);
}

Tensor::Tensor(DType dtype, Shape shape) : Tensor(dtype, std::move(shape), Uninitialized{}) {
  if (!data_.empty()) std::memset(data_.data(), 0, data_.size());
}

Tensor::Tensor(DType dtype, Shape shape, Uninitialized) : dtype_(dtype), shape_(std::move(shape)) {
  numel_ = 1;
  for (int64_t d : shape_) numel_ *= d;
  if (dtype_ == DType::kString) {
    strings_.resize(static_cast<size_t>(numel_));
  } else {
    data_ = ByteBuffer(static_cast<size_t>(numel_) * dtype_size(dtype_));
  }
}

namespace {

// Refuses element types and sizes that cannot be allocated rather than letting the allocator
// abort.
Status check_allocatable(DType dtype, const Shape& shape) {
  if (dtype == DType::kUndefined) return unsupported("tensor with undefined element type");
  const size_t esize = dtype == DType::kString ? sizeof(std::string) : dtype_size(dtype);
  // An element type onnxdbg has no size for (a number ONNX does not define) would get no
  // buffer, and every kernel would read through a null pointer.
  if (esize == 0)
    return unsupported("tensors of element type " + std::to_string(static_cast<int>(dtype)) +
                       " (ONNX TensorProto.DataType) are not supported by onnxdbg");
  ODB_ASSIGN_OR_RETURN(int64_t n, shape_numel(shape));
  constexpr int64_t kMaxBytes = int64_t{1} << 46;
  if (esize != 0 && n > kMaxBytes / static_cast<int64_t>(esize))
    return invalid_argument("tensor of shape " + shape_to_string(shape) + " and type " +
                            std::string(dtype_name(dtype)) + " is too large to allocate");
  return Status::ok();
}

// check_allocatable and, for a tensor about to be allocated, the run's memory limit
// (core/run_limits.h): a hostile model's intermediate tensor is refused here, before the
// allocator is asked for it. Small tensors skip the limit (it may read /proc/meminfo).
Status check_allocation(DType dtype, const Shape& shape) {
  ODB_RETURN_IF_ERROR(check_allocatable(dtype, shape));
  const RunLimits* limits = current_run_limits();
  return check_tensor_memory("a tensor", dtype, shape, limits ? limits->max_memory : 0);
}

}  // namespace

Expected<Tensor> Tensor::make(DType dtype, Shape shape) {
  ODB_RETURN_IF_ERROR(check_allocation(dtype, shape));
  return Tensor(dtype, std::move(shape));
}

Expected<Tensor> Tensor::make_uninitialized(DType dtype, Shape shape) {
  ODB_RETURN_IF_ERROR(check_allocation(dtype, shape));
  return Tensor(dtype, std::move(shape), Uninitialized{});
}

Expected<Tensor> Tensor::adopt(DType dtype, Shape shape, ByteBuffer buffer) {
  if (dtype == DType::kString)
    return invalid_argument("a string tensor cannot adopt a byte buffer");
  ODB_RETURN_IF_ERROR(check_allocatable(dtype, shape));
  ODB_ASSIGN_OR_RETURN(int64_t n, shape_numel(shape));
  const size_t want = static_cast<size_t>(n) * dtype_size(dtype);
  if (buffer.size() != want)
    return invalid_argument("a " + std::string(dtype_name(dtype)) + " tensor of shape " +
                            shape_to_string(shape) + " needs " + std::to_string(want) +
                            " bytes, the buffer holds " + std::to_string(buffer.size()));
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.numel_ = n;
  t.data_ = std::move(buffer);
  return t;
}

Expected<Tensor> Tensor::reshaped(Shape shape) const& {
  Tensor t = *this;
  return std::move(t).reshaped(std::move(shape));
}

Expected<Tensor> Tensor::reshaped(Shape shape) && {
  ODB_ASSIGN_OR_RETURN(int64_t n, shape_numel(shape));
  if (n != numel_)
    return invalid_argument("cannot reshape " + shape_to_string(shape_) + " (" +
                            std::to_string(numel_) + " elements) to " + shape_to_string(shape));
  Tensor t = std::move(*this);
  t.shape_ = std::move(shape);
  return t;
}

double Tensor::get_as_double(int64_t i) const {
  switch (dtype_) {
    case DType::kFloat:
      return data<float>()[i];
    case DType::kDouble:
      return data<double>()[i];
    case DType::kFloat16:
      return static_cast<float>(data<Float16>()[i]);
    case DType::kBFloat16:
      return static_cast<float>(data<BFloat16>()[i]);
    case DType::kInt8:
      return data<int8_t>()[i];
    case DType::kInt16:
      return data<int16_t>()[i];
    case DType::kInt32:
      return data<int32_t>()[i];
    case DType::kInt64:
      return static_cast<double>(data<int64_t>()[i]);
    case DType::kUint8:
      return data<uint8_t>()[i];
    case DType::kUint16:
      return data<uint16_t>()[i];
    case DType::kUint32:
      return data<uint32_t>()[i];
    case DType::kUint64:
      return static_cast<double>(data<uint64_t>()[i]);
    case DType::kBool:
      return data<bool>()[i] ? 1.0 : 0.0;
    default:
      if (is_narrow_float(dtype_) || is_narrow_integer(dtype_))
        return narrow_to_double(dtype_, static_cast<uint8_t>(data_.data()[i]));
      return std::numeric_limits<double>::quiet_NaN();
  }
}

namespace {
// float64 to float32 rounding to odd: the float32 toward zero, with its last bit set when
// inexact. Rounding that once more to float16 or bfloat16 (at most 24 - 2 bits) gives the same as
// rounding the float64 directly (Boldo and Melquiond, "Emulation of FMA and correctly rounded
// sums: proved algorithms using rounding to odd"), so a float64 is rounded once, not twice.
float round_to_odd(double d) {
  float f = static_cast<float>(d);
  if (std::isnan(d) || std::isinf(f) || static_cast<double>(f) == d) return f;
  if (std::fabs(static_cast<double>(f)) > std::fabs(d)) f = std::nextafter(f, 0.0f);
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  bits |= 1u;
  std::memcpy(&f, &bits, sizeof bits);
  return f;
}

template <class I>
I to_int(double v) {
  if (std::isnan(v)) return I{0};
  if (v >= static_cast<double>(std::numeric_limits<I>::max())) return std::numeric_limits<I>::max();
  if (v <= static_cast<double>(std::numeric_limits<I>::lowest()))
    return std::numeric_limits<I>::lowest();
  return static_cast<I>(v);
}
}  // namespace

void Tensor::set_from_double(int64_t i, double v) {
  switch (dtype_) {
    case DType::kFloat:
      data<float>()[i] = static_cast<float>(v);
      break;
    case DType::kDouble:
      data<double>()[i] = v;
      break;
    case DType::kFloat16:
      data<Float16>()[i] = Float16(round_to_odd(v));
      break;
    case DType::kBFloat16:
      data<BFloat16>()[i] = BFloat16(round_to_odd(v));
      break;
    case DType::kInt8:
      data<int8_t>()[i] = to_int<int8_t>(v);
      break;
    case DType::kInt16:
      data<int16_t>()[i] = to_int<int16_t>(v);
      break;
    case DType::kInt32:
      data<int32_t>()[i] = to_int<int32_t>(v);
      break;
    case DType::kInt64:
      data<int64_t>()[i] = to_int<int64_t>(v);
      break;
    case DType::kUint8:
      data<uint8_t>()[i] = to_int<uint8_t>(v);
      break;
    case DType::kUint16:
      data<uint16_t>()[i] = to_int<uint16_t>(v);
      break;
    case DType::kUint32:
      data<uint32_t>()[i] = to_int<uint32_t>(v);
      break;
    case DType::kUint64:
      data<uint64_t>()[i] = to_int<uint64_t>(v);
      break;
    case DType::kBool:
      data<bool>()[i] = v != 0.0;
      break;
    default:
      if (is_narrow_float(dtype_) || is_narrow_integer(dtype_))
        data_.data()[i] = std::byte{narrow_from_double(dtype_, v)};
      break;
  }
}

namespace {

// One element as get_as_double reads it and set_from_double writes it, for the types both handle
// without a table: the same results, in a loop the compiler can vectorize.
template <class To, class From>
To convert_element(From x) {
  const double v = static_cast<double>(x);
  if constexpr (std::is_same_v<To, bool>) {
    return v != 0.0;
  } else if constexpr (std::is_floating_point_v<To> && std::is_integral_v<From> &&
                       sizeof(From) <= 4) {
    // Exact in double, so converting directly rounds the same once (and packs 8 per instruction
    // rather than 2 through double).
    return static_cast<To>(x);
  } else if constexpr (std::is_floating_point_v<To>) {
    return static_cast<To>(v);
  } else if constexpr (std::is_floating_point_v<From> || sizeof(From) == 8 || sizeof(To) == 8 ||
                       std::is_signed_v<From> != std::is_signed_v<To> ||
                       sizeof(From) > sizeof(To)) {
    return to_int<To>(v);
  } else {
    return static_cast<To>(x);  // widening within the same signedness: exact
  }
}

// Vectorised (CMakeLists.txt gives this file the kernels' cost model); __restrict spares the
// loop a run-time overlap check.
template <class From, class To>
void convert_loop(const From* __restrict in, To* __restrict out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = convert_element<To>(in[i]);
}

// Calls f with a value of t's C++ type for float, double, the 8- to 64-bit integers and bool;
// returns false for the others.
template <class F>
bool visit_plain(DType t, F&& f) {
  switch (t) {
    case DType::kFloat:
      f(float{});
      return true;
    case DType::kDouble:
      f(double{});
      return true;
    case DType::kInt8:
      f(int8_t{});
      return true;
    case DType::kInt16:
      f(int16_t{});
      return true;
    case DType::kInt32:
      f(int32_t{});
      return true;
    case DType::kInt64:
      f(int64_t{});
      return true;
    case DType::kUint8:
      f(uint8_t{});
      return true;
    case DType::kUint16:
      f(uint16_t{});
      return true;
    case DType::kUint32:
      f(uint32_t{});
      return true;
    case DType::kUint64:
      f(uint64_t{});
      return true;
    case DType::kBool:
      f(bool{});
      return true;
    default:
      return false;
  }
}

// `in` converted into `out` (same element count) when both types are plain; false otherwise.
bool convert_plain(const Tensor& in, Tensor& out) {
  bool done = false;
  visit_plain(in.dtype(), [&](auto from) {
    using From = decltype(from);
    done = visit_plain(out.dtype(), [&](auto to) {
      using To = decltype(to);
      convert_loop(in.data<From>(), out.data<To>(), in.numel());
    });
  });
  return done;
}

void numbers_to_strings(const Tensor& t, Tensor& out) {
  for (int64_t i = 0; i < t.numel(); ++i) {
    std::ostringstream os;
    os.precision(9);
    os << t.get_as_double(i);
    out.strings()[static_cast<size_t>(i)] = os.str();
  }
}

Status strings_to_numbers(const Tensor& t, Tensor& out) {
  for (int64_t i = 0; i < t.numel(); ++i) {
    const std::string& s = t.strings()[static_cast<size_t>(i)];
    char* end = nullptr;
    double v = std::strtod(s.c_str(), &end);
    if (end == s.c_str()) return invalid_argument("cannot cast string '" + s + "' to a number");
    out.set_from_double(i, v);
  }
  return Status::ok();
}

// 32- and 64-bit integers to int64 directly (they do not all fit a double exactly).
void integers_to_int64(const Tensor& t, Tensor& out) {
  for (int64_t i = 0; i < t.numel(); ++i) {
    int64_t v = 0;
    switch (t.dtype()) {
      case DType::kInt32:
        v = t.data<int32_t>()[i];
        break;
      case DType::kUint32:
        v = t.data<uint32_t>()[i];
        break;
      case DType::kUint64:
        v = static_cast<int64_t>(t.data<uint64_t>()[i]);
        break;
      default:
        break;
    }
    out.data<int64_t>()[i] = v;
  }
}

// int64 to a narrower integer type, wrapping around as C and numpy do.
void int64_to_integer(const Tensor& t, Tensor& out) {
  for (int64_t i = 0; i < t.numel(); ++i) {
    const int64_t v = t.data<int64_t>()[i];
    switch (out.dtype()) {
      case DType::kInt8:
        out.data<int8_t>()[i] = static_cast<int8_t>(v);
        break;
      case DType::kInt16:
        out.data<int16_t>()[i] = static_cast<int16_t>(v);
        break;
      case DType::kInt32:
        out.data<int32_t>()[i] = static_cast<int32_t>(v);
        break;
      case DType::kUint8:
        out.data<uint8_t>()[i] = static_cast<uint8_t>(v);
        break;
      case DType::kUint16:
        out.data<uint16_t>()[i] = static_cast<uint16_t>(v);
        break;
      case DType::kUint32:
        out.data<uint32_t>()[i] = static_cast<uint32_t>(v);
        break;
      case DType::kUint64:
        out.data<uint64_t>()[i] = static_cast<uint64_t>(v);
        break;
      default:
        break;
    }
  }
}

// float32 <-> float16 in bulk (F16C where the CPU has it), and float64 to float16/bfloat16 with
// one rounding (rounded to odd into float32 first, as set_from_double gives). False for other
// pairs.
bool cast_float_bulk(const Tensor& t, Tensor& out) {
  // float_to_float16 and float16_to_float see a Float16 array as its uint16_t bit patterns.
  static_assert(sizeof(Float16) == sizeof(uint16_t));
  const int64_t n = t.numel();
  const DType from = t.dtype(), to = out.dtype();
  if (from == DType::kFloat && to == DType::kFloat16) {
    float_to_float16(t.data<float>(), &out.data<Float16>()->bits, static_cast<size_t>(n));
  } else if (from == DType::kFloat16 && to == DType::kFloat) {
    float16_to_float(&t.data<Float16>()->bits, out.data<float>(), static_cast<size_t>(n));
  } else if (from == DType::kDouble && to == DType::kFloat16) {
    constexpr int64_t kBlock = 1024;
    float odd[kBlock];
    const double* src = t.data<double>();
    for (int64_t i = 0; i < n; i += kBlock) {
      const int64_t m = std::min(kBlock, n - i);
      for (int64_t j = 0; j < m; ++j) odd[j] = round_to_odd(src[i + j]);
      float_to_float16(odd, &out.data<Float16>()[i].bits, static_cast<size_t>(m));
    }
  } else if (from == DType::kDouble && to == DType::kBFloat16) {
    const double* src = t.data<double>();
    for (int64_t i = 0; i < n; ++i) out.data<BFloat16>()[i] = BFloat16(round_to_odd(src[i]));
  } else {
    return false;
  }
  return true;
}

}  // namespace

Expected<Tensor> cast_tensor(const Tensor& t, DType to, const NarrowCast& narrow) {
  if (to == DType::kComplex64 || to == DType::kComplex128 || t.dtype() == DType::kComplex64 ||
      t.dtype() == DType::kComplex128)
    return unsupported("Cast to or from complex types");
  if (t.dtype() == to) return t;
  // The float16 <-> float32 loops and convert_plain write every element: no zero fill first (a
  // float16 model's every node casts its activations both ways around its float32 kernel; an
  // int8 model casts every int32 MatMulInteger result to float32).
  const auto plain = [](DType d) { return visit_plain(d, [](auto) {}); };
  const bool whole = (t.dtype() == DType::kFloat && to == DType::kFloat16) ||
                     (t.dtype() == DType::kFloat16 && to == DType::kFloat) ||
                     (plain(t.dtype()) && plain(to));
  ODB_ASSIGN_OR_RETURN(
      Tensor out, whole ? Tensor::make_uninitialized(to, t.shape()) : Tensor::make(to, t.shape()));
  if (to == DType::kString) {
    numbers_to_strings(t, out);
  } else if (t.dtype() == DType::kString) {
    ODB_RETURN_IF_ERROR(strings_to_numbers(t, out));
  } else if (to == DType::kInt64 && (t.dtype() == DType::kInt32 || t.dtype() == DType::kUint32 ||
                                     t.dtype() == DType::kInt64 || t.dtype() == DType::kUint64)) {
    integers_to_int64(t, out);
  } else if (t.dtype() == DType::kInt64 && is_integer(to)) {
    int64_to_integer(t, out);
  } else if (cast_float_bulk(t, out)) {
    return out;
  } else if (is_narrow_float(to) || is_narrow_integer(to)) {  // the attributes of Cast-19/24
    for (int64_t i = 0; i < t.numel(); ++i)
      out.raw()[i] = std::byte{narrow_from_double(to, t.get_as_double(i), narrow)};
  } else if (!convert_plain(t, out)) {
    for (int64_t i = 0; i < t.numel(); ++i) out.set_from_double(i, t.get_as_double(i));
  }
  return out;
}

}  // namespace onnxdbg
