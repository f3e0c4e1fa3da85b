// A tensor's axes permuted as a new dense tensor (see transpose.h): rows of the result's last
// axis gathered from the source at that axis's stride, the other axes walked as an odometer.
#include "core/transpose.h"

#include <cstring>

namespace onnxdbg {
namespace {

/// Calls copy(dst, src, len, step) for every row of the result's last axis: `dst` the row's
/// first element in the result, `src` that element's in the source, `step` the source's stride
/// along the row (all in elements). `src_strides[i]` is the source's stride of result axis i.
template <class Copy>
void for_each_row(const Shape& out_shape, const std::vector<int64_t>& src_strides, int64_t numel,
                  Copy copy) {
  const size_t r = out_shape.size();
  const int64_t len = out_shape[r - 1];
  const int64_t step = src_strides[r - 1];
  std::vector<int64_t> idx(r - 1, 0);
  int64_t src = 0;
  for (int64_t dst = 0; dst < numel; dst += len) {
    copy(dst, src, len, step);
    for (size_t k = r - 1; k-- > 0;) {
      if (++idx[k] < out_shape[k]) {
        src += src_strides[k];
        break;
      }
      src -= src_strides[k] * (out_shape[k] - 1);
      idx[k] = 0;
    }
  }
}

/// The rows copied as unsigned integers of the element's size U (the bits, whatever the type).
template <class U>
void copy_bits(const Tensor& x, Tensor& out, const std::vector<int64_t>& src_strides) {
  const U* s = reinterpret_cast<const U*>(x.raw());
  U* d = reinterpret_cast<U*>(out.raw());
  for_each_row(out.shape(), src_strides, out.numel(),
               [&](int64_t dst, int64_t src, int64_t len, int64_t step) {
                 const U* p = s + src;
                 U* q = d + dst;
                 for (int64_t j = 0; j < len; ++j) q[j] = p[j * step];
               });
}

}  // namespace

bool is_axis_permutation(const std::vector<int64_t>& perm, size_t rank) {
  if (perm.size() != rank) return false;
  std::vector<bool> seen(rank, false);
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(rank) || seen[static_cast<size_t>(p)]) return false;
    seen[static_cast<size_t>(p)] = true;
  }
  return true;
}

Expected<Tensor> transpose_axes(const Tensor& x, const std::vector<int64_t>& perm) {
  const size_t rank = x.shape().size();
  if (!is_axis_permutation(perm, rank)) {
    std::string p;
    for (int64_t v : perm) p += (p.empty() ? "" : ",") + std::to_string(v);
    return invalid_argument("(" + p + ") is not a permutation of the axes of a tensor of shape " +
                            shape_to_string(x.shape()));
  }
  std::vector<int64_t> in_strides(rank, 1);
  for (size_t i = rank; i-- > 1;) in_strides[i - 1] = in_strides[i] * x.shape()[i];
  Shape out_shape(rank);
  std::vector<int64_t> src_strides(rank);
  for (size_t i = 0; i < rank; ++i) {
    out_shape[i] = x.shape()[static_cast<size_t>(perm[i])];
    src_strides[i] = in_strides[static_cast<size_t>(perm[i])];
  }
  ODB_ASSIGN_OR_RETURN(Tensor out, Tensor::make_uninitialized(x.dtype(), out_shape));
  if (x.numel() == 0) return out;
  if (rank == 0) {
    if (x.dtype() == DType::kString)
      out.strings() = x.strings();
    else
      std::memcpy(out.raw(), x.raw(), x.nbytes());
    return out;
  }
  if (x.dtype() == DType::kString) {
    const auto& s = x.strings();
    auto& d = out.strings();
    for_each_row(out_shape, src_strides, out.numel(),
                 [&](int64_t dst, int64_t src, int64_t len, int64_t step) {
                   for (int64_t j = 0; j < len; ++j)
                     d[static_cast<size_t>(dst + j)] = s[static_cast<size_t>(src + j * step)];
                 });
    return out;
  }
  switch (dtype_size(x.dtype())) {
    case 1:
      copy_bits<uint8_t>(x, out, src_strides);
      break;
    case 2:
      copy_bits<uint16_t>(x, out, src_strides);
      break;
    case 4:
      copy_bits<uint32_t>(x, out, src_strides);
      break;
    case 8:
      copy_bits<uint64_t>(x, out, src_strides);
      break;
    default: {  // complex128 (16 bytes), and any other size, element by element
      const size_t es = dtype_size(x.dtype());
      for_each_row(out_shape, src_strides, out.numel(),
                   [&](int64_t dst, int64_t src, int64_t len, int64_t step) {
                     for (int64_t j = 0; j < len; ++j)
                       std::memcpy(out.raw() + static_cast<size_t>(dst + j) * es,
                                   x.raw() + static_cast<size_t>(src + j * step) * es, es);
                   });
    }
  }
  return out;
}

}  // namespace onnxdbg
