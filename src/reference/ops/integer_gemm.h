// Exact integer convolution and matrix product for the quantized kernels (ConvInteger,
// QLinearConv, MatMulInteger, QLinearMatMul). On AMX or AVX-512 VNNI CPUs the 8-bit operands go
// as stored to tile or vpdpbusd kernels with int32 sums, zero points folded in afterwards
// (integer_gemm_8bit.cpp); elsewhere, minus their zero points, to an int16 AVX2 kernel with int32
// sums (integer_gemm.cpp) when no sum can leave int32, else to the float kernels' BLAS paths: float
// (sgemm) when every partial sum is certain to stay a float-exact integer, else double (dgemm).
// Either way the sums are the exact ones.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/run_limits.h"
#include "reference/kernel.h"
#include "reference/kernel_util.h"
#include "reference/ops/blas.h"
#include "reference/ops/conv_common.h"
#include "reference/ops/matmul_common.h"
#include "reference/parallel.h"

namespace onnxdbg::reference {

/// The floating type an integer dot product is computed in exactly.
enum class ExactFloat { kFloat, kDouble };

/// Picks the type in which sums of integer products are exact, given `bound`, an upper bound of
/// sum_k |a_k| * |b_k| over every output (a_k, b_k the integer operands, zero points subtracted).
///
/// Why this is exact: each product a_k * b_k of 8-bit operands is an integer below 2^16 in
/// magnitude, exact in float. BLAS adds products in an order of its own (blocks of k, vector
/// lanes, FMA or not), but every value it forms is the sum of some subset of an output's
/// products, so its magnitude is at most `bound`. A float holds every integer up to 2^24 (a double
/// every one up to 2^53), and the sum of two such integers whose exact value is again within the
/// limit is representable, so rounding leaves it as it is: by induction every partial sum, and so
/// the result, is exact. Beta 0 and alpha 1 add no rounding.
/// Errors: kUnsupported naming the node when even double could round (bound > 2^53: a dot
/// product of more than 2^37 8-bit terms, larger than any weight tensor memory holds).
inline Expected<ExactFloat> exact_float_for(const KernelContext& ctx, double bound) {
  if (bound <= 0x1p24) return ExactFloat::kFloat;
  if (bound <= 0x1p53) return ExactFloat::kDouble;
  return unsupported(ctx.describe() + ": integer sums could reach " + std::to_string(bound) +
                     ", beyond the 2^53 a double holds exactly");
}

/// The exact integer sums integer_conv and integer_matmul compute, held in the type that computed
/// them: int32 (conv_forward_int16), float or double (see exact_float_for); every value is an
/// integer.
class IntegerSums {
 public:
  enum class Type { kInt32, kFloat, kDouble };
  IntegerSums() = default;
  /// Room for `size` sums in `type`, uninitialised.
  IntegerSums(Type type, int64_t size) : size_(size) {
    const auto n = static_cast<size_t>(std::max<int64_t>(size, 1));
    if (type == Type::kInt32)
      i_.reset(new int32_t[n]);
    else if (type == Type::kFloat)
      f_.reset(new float[n]);
    else
      d_.reset(new double[n]);
  }
  int64_t size() const { return size_; }
  int32_t* ints() { return i_.get(); }
  float* floats() { return f_.get(); }
  double* doubles() { return d_.get(); }
  /// Calls f with the sums' storage: const int32_t*, const float* or const double*.
  template <class F>
  decltype(auto) visit(F&& f) const {
    if (i_) return f(static_cast<const int32_t*>(i_.get()));
    if (f_) return f(static_cast<const float*>(f_.get()));
    return f(static_cast<const double*>(d_.get()));
  }
  /// The sums as int32, wrapping modulo 2^32 as an int32 accumulator does (a sum beyond the int32
  /// range needs a dot product of more than 33,000 extreme 8-bit terms).
  void to_int32(int32_t* out) const {
    visit([&](const auto* v) {
      for (int64_t i = 0; i < size_; ++i)
        out[i] = static_cast<int32_t>(static_cast<uint32_t>(static_cast<int64_t>(v[i])));
    });
  }

  /// The sums as an int32 tensor of `shape` (whose element count is size()): int32 sums are
  /// handed over without a copy, float or double ones converted by to_int32. Errors:
  /// kModelError naming the node when the tensor cannot be made.
  Expected<Tensor> into_int32_tensor(const KernelContext& ctx, const Shape& shape) && {
    if (i_ && size_ > 0) {
      int32_t* p = i_.release();
      const auto release = [](void* owner) noexcept { delete[] static_cast<int32_t*>(owner); };
      return Tensor::adopt(
          DType::kInt32, shape,
          ByteBuffer::adopt(reinterpret_cast<std::byte*>(p),
                            static_cast<size_t>(size_) * sizeof(int32_t), release, p));
    }
    auto y = Tensor::make_uninitialized(DType::kInt32, shape);
    if (!y)
      return model_error(ctx.describe() + ": cannot create an output of shape " +
                         shape_to_string(shape) + ": " + y.status().message());
    to_int32(y->data<int32_t>());
    return std::move(*y);
  }

 private:
  int64_t size_ = 0;
  std::unique_ptr<int32_t[]> i_;
  std::unique_ptr<float[]> f_;
  std::unique_ptr<double[]> d_;
};

/// An 8-bit operand minus its zero points, as int16 (every difference of two 8-bit values is
/// within 2^9), with the statistics exact_float_for's bound needs.
struct ShiftedOperand {
  std::unique_ptr<int16_t[]> values;
  int64_t max_abs = 0;      ///< the largest |value|
  int64_t max_row_sum = 0;  ///< the largest sum of |value| over a row
  int64_t max_col_sum = 0;  ///< the largest sum of |value| over a column of one matrix
};

/// The kernels integer_conv and integer_matmul choose from, slowest first. All give the same
/// (exact) sums.
enum class IntegerKernel {
  kBlas,       ///< float or double BLAS GEMM (every CPU)
  kInt16Avx2,  ///< conv_forward_int16 / gemm_int16 (AVX2)
  kVnni512,    ///< conv_forward_8bit / matmul_8bit (AVX-512 VNNI)
  kAmx,        ///< conv_forward_8bit / matmul_8bit (AMX int8 tiles)
};

/// The kernel's name as tests and benchmarks print it ("blas", "int16-avx2", "vnni512", "amx").
const char* integer_kernel_name(IntegerKernel kernel);

/// The kernels this CPU runs, slowest first (kBlas always).
std::vector<IntegerKernel> integer_kernels_available();

/// The fastest kernel this CPU runs, no faster than the limit set_integer_kernel_limit set, nor
/// than the one environment variable ONNXDBG_INTEGER_KERNEL names (read once), if any.
IntegerKernel integer_kernel();

/// Caps integer_kernel() at `limit` (kAmx, the default, caps nothing), so that tests also run
/// the kernels slower CPUs take. Not for use while a model runs.
void set_integer_kernel_limit(IntegerKernel limit);

/// True when the CPU has AVX-512 F, BW and VNNI (integer_gemm_8bit.cpp).
bool vnni_available();

/// True when vnni_available() and the CPU has AMX-TILE and AMX-INT8 and Linux granted the process
/// the tile data state (asked once, on the first call).
bool amx_available();

/// The largest K (terms per sum) for which the 8-bit kernels' int32 sums are certain to be exact
/// whatever the values: K * 255 * 255 < 2^31.
constexpr int64_t kMaxExact8bitTerms = 33024;

/// Conv of x (uint8 or int8, [n, c, g.in...]) minus x_zero with w (uint8 or int8, [m, c / group,
/// g.kernel...]) minus w_zero[o] (one per output channel; none when empty), exact int32 sums
/// into y [n, m, g.out...], by `kernel` (kAmx: AMX tiles, kVnni512: AVX-512 VNNI;
/// integer_gemm_8bit.cpp) on the 8-bit values as stored, zero points folded in afterwards; the
/// column matrix is packed straight from x for 2-D convs, read as x for pointwise ones, and made
/// by im2col for the others.
/// Padding reads x_zero. Needs kernel <= integer_kernel(), kernel >= kVnni512 and
/// c / group * product(g.kernel) <= kMaxExact8bitTerms. Errors: the run limits' error when the
/// run is cancelled or out of time.
/// `band_done`, when set, is called once per band as soon as its sums are in y, with the image,
/// the group and the band's output positions [q0, q0 + count) of each of the group's channel
/// planes (bands run in parallel: it must only touch what those positions own), so that a caller
/// can consume the sums while they are in the cache (QLinearConv's requantization).
Status conv_forward_8bit(const Tensor& x, const Tensor& w, double x_zero,
                         const std::vector<double>& w_zero, IntegerKernel kernel, int32_t* y,
                         int64_t n, int64_t c, int64_t m, int64_t group, const SpatialGeometry& g,
                         const std::function<void(int64_t, int64_t, int64_t, int64_t)>& band_done);

/// A k x n uint8/int8 matrix B as matmul_8bit's kernels read it, packed once (pack_b_8bit): the
/// interpreter keeps it as the node's KernelState when B is an initializer, so that the weights
/// of MatMulInteger and QLinearMatMul are packed on the first run only (packing them was 16-19%
/// of each run of an int8 MLP).
struct PackedB8 : KernelState {
  const std::byte* source = nullptr;  ///< the bytes packed (b.raw())
  DType dtype = DType::kUndefined;    ///< b's type
  int64_t k = 0, n = 0;               ///< b's shape
  IntegerKernel kernel = IntegerKernel::kBlas;
  int64_t nq = 0;      ///< quads (4 rows) per strip: K padded as the kernel's A rows are
  int64_t strips = 0;  ///< strips of 16 columns, a whole number of pairs (zeros past n)
  /// Strip s (columns 16s to 16s + 15) at 64 * nq * s: per quad 64 bytes, byte 4c + t holding
  /// row 4q + t of column c, uint8 (an int8 b's bytes with the top bit flipped).
  AlignedArray<uint8_t> panels;
  std::vector<int32_t> cb;  ///< the packed bytes' sum per column, 16 per strip
  /// True when this is `b` (rows x cols) packed for `for_kernel`.
  bool packs(const Tensor& b, int64_t rows, int64_t cols, IntegerKernel for_kernel) const;
  /// The bytes held.
  size_t bytes() const;
};

/// b (uint8 or int8, k x n, row-major) packed for `kernel` (kVnni512 or kAmx, at most
/// integer_kernel()). Throws std::bad_alloc as operator new.
std::unique_ptr<PackedB8> pack_b_8bit(const Tensor& b, int64_t k, int64_t n, IntegerKernel kernel);

/// The sums of integer_matmul by `kernel` (kAmx: AMX tiles, kVnni512: AVX-512 VNNI) on the
/// 8-bit values as stored: c (laid out as p.out_shape) = (A - a_zero[row]) x (B - b_zero[col])
/// for uint8/int8 A and B, a_zero with p.m values (or none), b_zero with p.n (or none), B's
/// strips read from `packed` when given (b packed for `kernel` by pack_b_8bit; B is then one
/// matrix, as every b_offset is 0), else packed as they are needed. Needs kernel <=
/// integer_kernel(), kernel >= kVnni512 and p.k <= kMaxExact8bitTerms. Errors: the run limits'
/// error; kInternal when `packed` holds another matrix or kernel.
Status matmul_8bit(const Tensor& a, const Tensor& b, const std::vector<double>& a_zero,
                   const std::vector<double>& b_zero, const MatMulPlan& p, IntegerKernel kernel,
                   const PackedB8* packed, int32_t* c);

/// The banding of the integer convolutions: f(image, group, o0, o1) for each band [o0, o1) of
/// `band` output rows (the outer index, all spatial dims but the last, of `outer` in all) of
/// every (image, group), the bands of one (image, group) in parallel, the run limits checked
/// before each. The bands depend on the shapes alone, not on the thread count. Errors: f's, and
/// the run limits' when the run is cancelled or out of time.
template <class F>
Status for_each_conv_band(int64_t n, int64_t group, int64_t outer, int64_t band, F&& f) {
  const int64_t bands = (outer + band - 1) / band;
  for (int64_t b = 0; b < n; ++b)
    for (int64_t gi = 0; gi < group; ++gi)
      ODB_RETURN_IF_ERROR(parallel_for_status(bands, [&](int64_t bi) -> Status {
        ODB_RETURN_IF_ERROR(check_run_limits());
        const int64_t o0 = bi * band;
        return f(b, gi, o0, std::min(outer, o0 + band));
      }));
  return Status::ok();
}

/// Conv of int16 operands with exact int32 sums (integer_gemm.cpp): y [n, m, g.out...] = w [m,
/// c / group, g.kernel...] * x [n, c, g.in...], laid out as conv_forward's. Per (image, group),
/// bands of output positions are unfolded by im2col and multiplied by an AVX2 kernel that adds
/// pairs of products (vpmaddwd) into int32 lanes: exact as long as every partial sum stays
/// within int32, which the caller guarantees by bounding sum_k |w| |x| below 2^31. Needs
/// integer_kernel() >= IntegerKernel::kInt16Avx2. Errors: the run limits' error when the run is
/// cancelled or out of time.
Status conv_forward_int16(const int16_t* x, const int16_t* w, int32_t* y, int64_t n, int64_t c,
                          int64_t m, int64_t group, const SpatialGeometry& g);

/// c [m, n] = a [m, k] * b [k, n] on int16 operands with exact int32 sums, by the kernel of
/// conv_forward_int16 (all row-major and dense). b must be readable for n + 16 elements past its
/// end (the kernel reads whole 16-column strips and, for an odd k, one row more, which it
/// multiplies by 0). Exact as long as every partial sum stays within int32 (the caller bounds
/// sum_k |a| |b| below 2^31). Needs integer_kernel() >= IntegerKernel::kInt16Avx2. Errors: the run
/// limits' error.
Status gemm_int16(const int16_t* a, int64_t m, int64_t k, const int16_t* b, int64_t n, int32_t* c);

/// The loop of shift_8bit for source type S; kColumns adds column zero points and column sums.
/// Integer arithmetic throughout, so that it vectorises (float sums would not, for lack of
/// associativity).
template <bool kColumns, class S>
void shift_8bit_rows(const S* src, int64_t rows, int64_t cols, int64_t rows_per_matrix,
                     const std::vector<int32_t>& row_zero, const std::vector<int32_t>& col_zero,
                     ShiftedOperand& out) {
  std::vector<int64_t> col_sum(kColumns ? static_cast<size_t>(cols) : 0, 0);
  int16_t* dst = out.values.get();
  int32_t max_abs = 0;
  for (int64_t r = 0; r < rows; ++r) {
    const int32_t zr = row_zero.empty() ? 0 : row_zero[static_cast<size_t>(r) % row_zero.size()];
    const S* s = src + r * cols;
    int16_t* d = dst + r * cols;
    int64_t row_sum = 0;
    for (int64_t j = 0; j < cols; ++j) {
      int32_t v = static_cast<int32_t>(s[j]) - zr;
      if constexpr (kColumns) v -= col_zero[static_cast<size_t>(j)];
      d[j] = static_cast<int16_t>(v);
      const int32_t a = v < 0 ? -v : v;
      row_sum += a;
      max_abs = a > max_abs ? a : max_abs;
      if constexpr (kColumns) col_sum[static_cast<size_t>(j)] += a;
    }
    out.max_row_sum = std::max(out.max_row_sum, row_sum);
    if constexpr (kColumns) {
      if ((r + 1) % rows_per_matrix == 0 || r + 1 == rows) {
        for (int64_t& c : col_sum) {
          out.max_col_sum = std::max(out.max_col_sum, c);
          c = 0;
        }
      }
    }
  }
  out.max_abs = max_abs;
}

/// t (uint8 or int8, the caller checks) seen as rows of `cols` elements, minus its zero points:
/// row r's `row_zero[r % row_zero.size()]` (none when empty) and, when `col_zero` is not empty,
/// column j's col_zero[j] (cols values). Column sums are taken per matrix of `rows_per_matrix`
/// rows (only with column zero points). Zero points are 8-bit values. `padding` zeros follow the
/// values.
inline ShiftedOperand shift_8bit(const Tensor& t, int64_t cols, int64_t rows_per_matrix,
                                 const std::vector<double>& row_zero,
                                 const std::vector<double>& col_zero, int64_t padding = 0) {
  ShiftedOperand out;
  out.values.reset(new int16_t[static_cast<size_t>(std::max<int64_t>(t.numel() + padding, 1))]);
  std::fill(out.values.get() + t.numel(), out.values.get() + t.numel() + padding, int16_t{0});
  if (t.numel() == 0 || cols <= 0) return out;
  const auto ints = [](const std::vector<double>& v) {
    return std::vector<int32_t>(v.begin(), v.end());
  };
  const std::vector<int32_t> rz = ints(row_zero), cz = ints(col_zero);
  const int64_t rows = t.numel() / cols, per = std::max<int64_t>(rows_per_matrix, 1);
  const auto run = [&](const auto* src) {
    if (cz.empty())
      shift_8bit_rows<false>(src, rows, cols, per, rz, cz, out);
    else
      shift_8bit_rows<true>(src, rows, cols, per, rz, cz, out);
  };
  if (t.dtype() == DType::kUint8)
    run(t.data<uint8_t>());
  else
    run(t.data<int8_t>());
  return out;
}

/// The operand's n values converted to T.
template <class T>
std::unique_ptr<T[]> operand_as(const ShiftedOperand& op, int64_t n) {
  std::unique_ptr<T[]> out(new T[static_cast<size_t>(std::max<int64_t>(n, 1))]);
  for (int64_t i = 0; i < n; ++i) out[static_cast<size_t>(i)] = op.values[static_cast<size_t>(i)];
  return out;
}

/// The geometry of an integer convolution (ConvInteger, QLinearConv): group, the spatial geometry
/// from Conv's attributes, and the output shape [N, M, O1, ...].
struct IntegerConvGeometry {
  int64_t group = 1;
  SpatialGeometry g;
  Shape out_shape;
};

/// Checks x [N, C, D1, ...] and w [M, C / group, k1, ...] against each other and Conv's attributes
/// (group, strides, dilations, pads, auto_pad, kernel_shape) and returns the geometry. Errors:
/// kModelError naming the node for inconsistent shapes or attributes.
inline Expected<IntegerConvGeometry> integer_conv_geometry(const KernelContext& ctx,
                                                           const Tensor& x, const Tensor& w) {
  if (x.rank() < 3 || w.rank() != x.rank())
    return model_error(ctx.describe() +
                       ": expects X [N, C, D1, ...] and W [M, C/group, k1, ...] of one "
                       "rank, got " +
                       shape_to_string(x.shape()) + " and " + shape_to_string(w.shape()));
  const int64_t c = x.dim(1), m = w.dim(0), group = ctx.attr_int("group", 1);
  if (group < 1 || c % group != 0 || m % group != 0 || w.dim(1) != c / group)
    return model_error(ctx.describe() + ": channels do not match group " + std::to_string(group) +
                       " (X " + shape_to_string(x.shape()) + ", W " + shape_to_string(w.shape()) +
                       ")");
  Shape kernel(w.shape().begin() + 2, w.shape().end()),
      in_spatial(x.shape().begin() + 2, x.shape().end());
  if (ctx.has_attr("kernel_shape") && ctx.attr_ints("kernel_shape") != kernel)
    return model_error(ctx.describe() + ": kernel_shape does not match W " +
                       shape_to_string(w.shape()));
  IntegerConvGeometry r;
  r.group = group;
  ODB_ASSIGN_OR_RETURN(r.g, forward_geometry(ctx, in_spatial, kernel, false));
  r.out_shape = {x.dim(0), m};
  r.out_shape.insert(r.out_shape.end(), r.g.out.begin(), r.g.out.end());
  return r;
}

/// What integer_conv calls when a part of its sums is final (see there).
using IntegerConvDone = std::function<void(const IntegerSums& sums, int64_t image, int64_t group,
                                           int64_t q0, int64_t count)>;

/// Integer convolution of (x - x_zero) with (w - w_zero[m]) (w_zero per output channel, M
/// values), following Conv's attributes (group, strides, dilations, pads, auto_pad,
/// kernel_shape); x and w are uint8 or int8 (the caller checks). Padding reads x_zero, so it
/// adds nothing. Computed by conv_forward_int16 when the sums' bound is below 2^31 on an AVX2
/// CPU (depthwise convs aside), else by conv_forward (im2col + BLAS GEMM, or the depthwise loop)
/// in float or double as exact_float_for allows, so the sums are exact. Returns the sums [N, M, O1,
/// ...] with `out_shape` set to that shape. `done`, when set, is called on every output position
/// exactly once as soon as its sums are final, with the sums, the image, the group and positions
/// [q0, q0 + count) of each of the group's channel planes: per band of the 8-bit kernels (while the
/// band is in the cache), per (image, group) after the other kernels; from several threads at
/// once. Errors: kModelError naming the node for inconsistent shapes or attributes;
/// conv_forward's errors.
inline Expected<IntegerSums> integer_conv(const KernelContext& ctx, const Tensor& x,
                                          const Tensor& w, double x_zero,
                                          const std::vector<double>& w_zero, Shape& out_shape,
                                          const IntegerConvDone& done = {}) {
  ODB_ASSIGN_OR_RETURN(const IntegerConvGeometry geo, integer_conv_geometry(ctx, x, w));
  const int64_t n = x.dim(0), c = x.dim(1), m = w.dim(0), group = geo.group;
  const SpatialGeometry& g = geo.g;
  const Shape& kernel = g.kernel;
  const Shape& in_spatial = g.in;
  out_shape = geo.out_shape;
  const bool depthwise = c / group == 1 && group > 1;
  const IntegerKernel kernel_used = integer_kernel();
  if (kernel_used >= IntegerKernel::kVnni512 && !depthwise &&
      c / group * product(kernel) <= kMaxExact8bitTerms) {
    IntegerSums sums(IntegerSums::Type::kInt32, product(out_shape));
    const auto band_done = [&](int64_t image, int64_t gi, int64_t q0, int64_t count) {
      done(sums, image, gi, q0, count);
    };
    if (sums.size() > 0)
      ODB_RETURN_IF_ERROR(conv_forward_8bit(
          x, w, x_zero, w_zero, kernel_used, sums.ints(), n, c, m, group, g,
          done ? std::function<void(int64_t, int64_t, int64_t, int64_t)>(band_done) : nullptr));
    return sums;
  }
  // The other kernels: `done` per (image, group) once all sums are there.
  const auto finish = [&](IntegerSums sums) -> Expected<IntegerSums> {
    if (done && sums.size() > 0)
      parallel_for(n * group,
                   [&](int64_t i) { done(sums, i / group, i % group, 0, product(g.out)); });
    return sums;
  };
  const int64_t per_channel = w.numel() / std::max<int64_t>(m, 1);
  const ShiftedOperand xs =
      shift_8bit(x, std::max<int64_t>(product(in_spatial), 1), 1, std::vector<double>{x_zero}, {});
  const ShiftedOperand ws = shift_8bit(w, per_channel, 1, w_zero, {});
  // Each output is a dot product of one channel's weights with x's values or padding (0 once
  // shifted): bounded by that channel's sum of |w - w_zero| times the largest |x - x_zero|.
  const double bound = static_cast<double>(xs.max_abs) * static_cast<double>(ws.max_row_sum);
  // Below 2^31 every partial sum fits int32: the AVX2 kernel, except for depthwise convs (one
  // input channel per group), which conv_forward's direct loop does better than a GEMM.
  if (bound < 0x1p31 && !depthwise && kernel_used >= IntegerKernel::kInt16Avx2) {
    IntegerSums sums(IntegerSums::Type::kInt32, product(out_shape));
    if (sums.size() > 0)
      ODB_RETURN_IF_ERROR(
          conv_forward_int16(xs.values.get(), ws.values.get(), sums.ints(), n, c, m, group, g));
    return finish(std::move(sums));
  }
  ODB_ASSIGN_OR_RETURN(const ExactFloat type, exact_float_for(ctx, bound));
  IntegerSums sums(
      type == ExactFloat::kFloat ? IntegerSums::Type::kFloat : IntegerSums::Type::kDouble,
      product(out_shape));
  const auto run = [&](auto* y) -> Status {
    using T = std::remove_pointer_t<decltype(y)>;
    return conv_forward<T>(operand_as<T>(xs, x.numel()).get(), operand_as<T>(ws, w.numel()).get(),
                           nullptr, y, n, c, m, group, g);
  };
  if (sums.size() > 0)
    ODB_RETURN_IF_ERROR(type == ExactFloat::kFloat ? run(sums.floats()) : run(sums.doubles()));
  return finish(std::move(sums));
}

/// B (input `b_input` of ctx's node, k x n as p says) packed for `kernel` when it is an
/// initializer (KernelContext::input_is_constant) of rank 2: the pack kept from an earlier run
/// when it still fits, else packed now and kept (KernelContext::keep_state); nullptr when B is
/// not constant or its pack would pass KernelStates' budget (matmul_8bit then packs as it goes).
inline const PackedB8* constant_packed_b(KernelContext& ctx, const Tensor& b, size_t b_input,
                                         const MatMulPlan& p, IntegerKernel kernel) {
  if (!ctx.input_is_constant(b_input) || b.rank() != 2) return nullptr;
  if (const auto* kept = dynamic_cast<const PackedB8*>(ctx.state());
      kept && kept->packs(b, p.k, p.n, kernel))
    return kept;
  if (!ctx.can_keep_state(static_cast<size_t>(p.k + 64) * static_cast<size_t>(p.n + 32)))
    return nullptr;
  std::unique_ptr<PackedB8> packed = pack_b_8bit(b, p.k, p.n, kernel);
  const PackedB8* kept = packed.get();
  const size_t bytes = packed->bytes();
  return ctx.keep_state(std::move(packed), bytes) ? kept : nullptr;
}

/// Integer matrix product (A - a_zero[row]) x (B - b_zero[col]) over the batches of `plan`
/// (plan_matmul of A's and B's shapes; a_zero has plan.m values, one per row of each A matrix,
/// b_zero plan.n, one per column of each B matrix); A and B are uint8 or int8 (the caller
/// checks). Computed by gemm_int16 when the sums' bound is below 2^31 on an AVX2 CPU, else by
/// BLAS GEMM in float or double as exact_float_for allows, in tiles fixed by the shapes, so the
/// sums are exact; on the 8-bit kernels, B is packed once and kept when it is constant
/// (constant_packed_b; `b_input` is B's input index on ctx's node). Returns the sums laid out as
/// plan.out_shape. Errors: kUnsupported when a dimension exceeds 32-bit BLAS or even double could
/// round.
inline Expected<IntegerSums> integer_matmul(KernelContext& ctx, const Tensor& a, const Tensor& b,
                                            const std::vector<double>& a_zero,
                                            const std::vector<double>& b_zero, const MatMulPlan& p,
                                            size_t b_input) {
  const IntegerKernel kernel_used = integer_kernel();
  if (kernel_used >= IntegerKernel::kVnni512 && p.k <= kMaxExact8bitTerms) {
    IntegerSums sums(IntegerSums::Type::kInt32,
                     static_cast<int64_t>(p.a_offsets.size()) * p.m * p.n);
    if (sums.size() > 0)
      ODB_RETURN_IF_ERROR(matmul_8bit(a, b, a_zero, b_zero, p, kernel_used,
                                      constant_packed_b(ctx, b, b_input, p, kernel_used),
                                      sums.ints()));
    return sums;
  }
  // Output (r, c) is bounded both by row r's sum of |a - a_zero| times the largest |b - b_zero|
  // and by the largest |a - a_zero| times column c's sum of |b - b_zero|; the smaller bound holds.
  const ShiftedOperand as = shift_8bit(a, p.k, 1, a_zero, {});
  // B padded for gemm_int16, which reads whole 16-column strips and one row more for an odd K.
  const ShiftedOperand bs = shift_8bit(b, p.n, p.k, {}, b_zero, p.n + 16);
  const double bound =
      std::min(static_cast<double>(as.max_row_sum) * static_cast<double>(bs.max_abs),
               static_cast<double>(as.max_abs) * static_cast<double>(bs.max_col_sum));
  const int64_t nb = static_cast<int64_t>(p.a_offsets.size()), mn = p.m * p.n;
  // Below 2^31 every partial sum fits int32: the AVX2 kernel.
  if (bound < 0x1p31 && kernel_used >= IntegerKernel::kInt16Avx2) {
    IntegerSums sums(IntegerSums::Type::kInt32, nb * mn);
    if (sums.size() == 0) return sums;
    const int16_t* pa = as.values.get();
    const int16_t* pb = bs.values.get();
    if (p.fold_batch) {
      ODB_RETURN_IF_ERROR(gemm_int16(pa, nb * p.m, p.k, pb, p.n, sums.ints()));
    } else {
      for (int64_t i = 0; i < nb; ++i) {
        const auto iu = static_cast<size_t>(i);
        ODB_RETURN_IF_ERROR(gemm_int16(pa + p.a_offsets[iu], p.m, p.k, pb + p.b_offsets[iu], p.n,
                                       sums.ints() + i * mn));
      }
    }
    return sums;
  }
  ODB_ASSIGN_OR_RETURN(const ExactFloat type, exact_float_for(ctx, bound));
  IntegerSums sums(
      type == ExactFloat::kFloat ? IntegerSums::Type::kFloat : IntegerSums::Type::kDouble, nb * mn);
  const auto run = [&](auto* y) -> Status {
    using T = std::remove_pointer_t<decltype(y)>;
    const std::unique_ptr<T[]> a_values = operand_as<T>(as, a.numel()),
                               b_values = operand_as<T>(bs, b.numel());
    return blas_matmul<T>(p, a_values.get(), b_values.get(), y);
  };
  if (sums.size() > 0)
    ODB_RETURN_IF_ERROR(type == ExactFloat::kFloat ? run(sums.floats()) : run(sums.doubles()));
  return sums;
}

}  // namespace onnxdbg::reference
