// Broadcasting and small helpers shared by the reference kernels.
#include "reference/kernel_util.h"

namespace onnxdbg::reference {

BroadcastRuns::BroadcastRuns(const Shape& out, const std::vector<std::vector<int64_t>>& strides)
    : st(strides.size()) {
  const size_t k = strides.size();
  numel = 1;
  for (int64_t d : out) numel *= d;
  for (size_t d = out.size(); d-- > 0;) {
    if (out[d] == 1) continue;
    bool merge = !dims.empty();
    for (size_t j = 0; merge && j < k; ++j) merge = strides[j][d] == st[j].back() * dims.back();
    if (merge) {
      dims.back() *= out[d];
      continue;
    }
    dims.push_back(out[d]);
    for (size_t j = 0; j < k; ++j) st[j].push_back(strides[j][d]);
  }
  if (dims.empty()) {  // a single element, or none
    dims.push_back(1);
    for (size_t j = 0; j < k; ++j) st[j].push_back(0);
  }
  for (size_t j = 0; j < k; ++j) steps.push_back(st[j][0]);
}

std::vector<int64_t> strides_of(const Shape& shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) s[i - 1] = s[i] * shape[i];
  return s;
}

Expected<Shape> broadcast_shapes(const std::vector<Shape>& shapes) {
  size_t rank = 0;
  for (const auto& s : shapes) rank = std::max(rank, s.size());
  Shape out(rank, 1);
  for (const auto& s : shapes) {
    const size_t off = rank - s.size();
    for (size_t i = 0; i < s.size(); ++i) {
      int64_t& o = out[off + i];
      if (s[i] == o) continue;
      if (o == 1) {
        o = s[i];
      } else if (s[i] != 1) {
        std::string all;
        for (const auto& x : shapes) all += (all.empty() ? "" : ", ") + shape_to_string(x);
        return model_error("shapes " + all + " cannot be broadcast together (dimension " +
                           std::to_string(off + i) + ")");
      }
    }
  }
  return out;
}

Expected<Shape> broadcast_shapes(const Shape& a, const Shape& b) {
  if (a == b) return a;
  return broadcast_shapes(std::vector<Shape>{a, b});
}

std::vector<int64_t> broadcast_strides(const Shape& in, const Shape& out) {
  std::vector<int64_t> s(out.size(), 0);
  const auto in_strides = strides_of(in);
  const size_t off = out.size() - in.size();
  for (size_t i = 0; i < in.size(); ++i) s[off + i] = in[i] == 1 ? 0 : in_strides[i];
  return s;
}

Expected<int64_t> normalize_axis(int64_t axis, int64_t rank, const std::string& what) {
  const int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= std::max<int64_t>(rank, 1))
    return model_error(what + " " + std::to_string(axis) + " is out of range for rank " +
                       std::to_string(rank));
  return a;
}

Expected<std::vector<int64_t>> to_int64_vector(const Tensor& t) {
  std::vector<int64_t> v(static_cast<size_t>(t.numel()));
  if (t.dtype() == DType::kInt64) {
    for (int64_t i = 0; i < t.numel(); ++i) v[static_cast<size_t>(i)] = t.data<int64_t>()[i];
  } else if (t.dtype() == DType::kInt32) {
    for (int64_t i = 0; i < t.numel(); ++i) v[static_cast<size_t>(i)] = t.data<int32_t>()[i];
  } else {
    return model_error("expected an int64 tensor, got " + std::string(dtype_name(t.dtype())));
  }
  return v;
}

void copy_element(const Tensor& src, int64_t i, Tensor& dst, int64_t j) {
  if (src.dtype() == DType::kString) {
    dst.strings()[static_cast<size_t>(j)] = src.strings()[static_cast<size_t>(i)];
    return;
  }
  const size_t es = dtype_size(src.dtype());
  std::memcpy(dst.raw() + static_cast<size_t>(j) * es, src.raw() + static_cast<size_t>(i) * es, es);
}

}  // namespace onnxdbg::reference
