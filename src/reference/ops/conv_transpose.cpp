// ConvTranspose (ONNX ConvTranspose-1, -11): the adjoint of Conv, computed per group as one BLAS
// GEMM (W_g^T x X_g) followed by col2im; supports groups, strides, dilations, pads, auto_pad,
// output_padding and output_shape with the pad split the ONNX spec gives.
#include <algorithm>

#include "reference/kernel.h"
#include "reference/kernel_util.h"
#include "reference/ops/blas.h"
#include "reference/ops/conv_common.h"
#include "reference/parallel.h"

namespace onnxdbg::reference {
namespace {

// Python-style floor division (the spec's formulas are written for it; totals may be negative).
int64_t floor_div(int64_t a, int64_t b) {
  const int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

// Geometry of the col2im step: `in` is Y's spatial shape, `out` is X's.
Expected<SpatialGeometry> transpose_geometry(const KernelContext& ctx, const Shape& x_spatial,
                                             const Shape& kernel) {
  SpatialGeometry g;
  g.kernel = kernel;
  g.out = x_spatial;
  const size_t nd = kernel.size();
  ODB_RETURN_IF_ERROR(read_strides_dilations(ctx, g));
  ODB_ASSIGN_OR_RETURN(std::string auto_pad, read_auto_pad(ctx));
  auto output_padding = ctx.attr_ints("output_padding", std::vector<int64_t>(nd, 0));
  if (output_padding.size() != nd)
    return model_error(ctx.describe() + ": output_padding " + ints_to_string(output_padding) +
                       " has " + std::to_string(output_padding.size()) + " values for " +
                       std::to_string(nd) + " spatial dims");
  auto output_shape = ctx.attr_ints("output_shape");
  if (output_shape.size() == nd + 2)
    output_shape.erase(output_shape.begin(), output_shape.begin() + 2);
  if (!output_shape.empty() && output_shape.size() != nd)
    return model_error(ctx.describe() + ": output_shape " + ints_to_string(output_shape) +
                       " does not have one value per spatial dim (" + std::to_string(nd) + ")");
  if (auto_pad == "NOTSET" && output_shape.empty()) {
    ODB_RETURN_IF_ERROR(read_pads(ctx, g));
  } else {
    g.pads_begin.assign(nd, 0);
    g.pads_end.assign(nd, 0);
  }
  g.in.resize(nd);
  for (size_t d = 0; d < nd; ++d) {
    // Attribute values whose arithmetic overflows int64 are refused by name (issue 17); an
    // output size that fits is checked against the memory limit when Y is made.
    int64_t ext = 0, full = 0, span = 0;
    if (__builtin_mul_overflow(kernel[d] - 1, g.dilations[d], &ext) ||
        __builtin_add_overflow(ext, 1, &ext) ||
        __builtin_mul_overflow(g.strides[d], x_spatial[d] - 1, &full) ||
        __builtin_add_overflow(full, output_padding[d], &full) ||
        __builtin_add_overflow(full, ext, &full) ||
        __builtin_sub_overflow(full, g.pads_begin[d], &span) ||
        __builtin_sub_overflow(span, g.pads_end[d], &span))
      return model_error(ctx.describe() + ": kernel " + ints_to_string(kernel) + " with strides " +
                         ints_to_string(g.strides) + ", dilations " + ints_to_string(g.dilations) +
                         ", output_padding " + ints_to_string(output_padding) + " and pads " +
                         ints_to_string(g.pads_begin) + " + " + ints_to_string(g.pads_end) +
                         " overflows 64-bit integers in the output size; refused before running");
    if (!output_shape.empty() || auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      g.in[d] = output_shape.empty() ? x_spatial[d] * g.strides[d] : output_shape[d];
      const int64_t total = full - g.in[d];
      // ONNX spec: SAME_UPPER puts the smaller half first, everything else the larger half.
      if (auto_pad == "SAME_UPPER") {
        g.pads_begin[d] = floor_div(total, 2);
      } else {
        g.pads_begin[d] = total - floor_div(total, 2);
      }
      g.pads_end[d] = total - g.pads_begin[d];
    } else {
      g.in[d] = full - g.pads_begin[d] - g.pads_end[d];
    }
    if (g.in[d] < 0)
      return model_error(ctx.describe() + ": pads " + ints_to_string(g.pads_begin) + " + " +
                         ints_to_string(g.pads_end) + " exceed the full output size " +
                         std::to_string(full) + " of spatial dim " + std::to_string(d));
  }
  return g;
}

template <class T>
Status conv_transpose_typed(KernelContext& ctx, const Tensor& x, const Tensor& w,
                            const Tensor* bias) {
  const int64_t n = x.dim(0), c = x.dim(1);
  const int64_t group = ctx.attr_int("group", 1);
  const std::string shapes = " (X " + shape_to_string(x.shape()) + ", W " +
                             shape_to_string(w.shape()) + ", group " + std::to_string(group) + ")";
  if (group < 1 || c % group != 0)
    return model_error(ctx.describe() + ": input channels must be divisible by group" + shapes);
  if (w.dim(0) != c)
    return model_error(ctx.describe() + ": W's first dim must equal X's channels" + shapes);
  const int64_t cg = c / group, mg = w.dim(1), m = mg * group;
  Shape kernel(w.shape().begin() + 2, w.shape().end());
  if (ctx.has_attr("kernel_shape") && ctx.attr_ints("kernel_shape") != kernel)
    return model_error(ctx.describe() + ": kernel_shape " +
                       ints_to_string(ctx.attr_ints("kernel_shape")) +
                       " does not match the weights" + shapes);
  if (bias && (bias->rank() != 1 || bias->dim(0) != m || bias->dtype() != x.dtype()))
    return model_error(ctx.describe() + ": bias B has shape " + shape_to_string(bias->shape()) +
                       " and type " + std::string(dtype_name(bias->dtype())) + ", expected [" +
                       std::to_string(m) + "] of " + std::string(dtype_name(x.dtype())) + shapes);
  Shape x_spatial(x.shape().begin() + 2, x.shape().end());
  ODB_ASSIGN_OR_RETURN(SpatialGeometry g, transpose_geometry(ctx, x_spatial, kernel));

  Shape out_shape{n, m};
  out_shape.insert(out_shape.end(), g.in.begin(), g.in.end());
  ODB_ASSIGN_OR_RETURN(Tensor y, Tensor::make(x.dtype(), out_shape));
  const int64_t pin = product(x_spatial), pout = product(g.in), k = product(kernel);
  const T* px = x.data<T>();
  const T* pw = w.data<T>();
  T* py = y.data<T>();
  std::vector<T> col(static_cast<size_t>(mg * k * pin));
  // Blocks of output channels, fixed by the shapes (parallel.h): each block's GEMM fills its own
  // rows of `col` and its col2im its own channels of Y, so blocks run on any thread with the
  // same bits.
  const int64_t block = std::max<int64_t>(1, 64 / std::max<int64_t>(k, 1));
  const int64_t blocks = (mg + block - 1) / block;
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t gi = 0; gi < group; ++gi) {
      const T* xg = px + (b * c + gi * cg) * pin;
      const T* wg = pw + gi * cg * mg * k;
      T* yg = py + (b * m + gi * mg) * pout;
      ODB_RETURN_IF_ERROR(parallel_for_status(blocks, [&](int64_t bi) {
        const int64_t c0 = bi * block, channels = std::min(block, mg - c0);
        T* rows = col.data() + c0 * k * pin;
        ODB_RETURN_IF_ERROR(gemm<T>(true, false, channels * k, pin, cg, T(1), wg + c0 * k, mg * k,
                                    xg, pin, T(0), rows, pin));
        col2im(rows, channels, g, yg + c0 * pout);
        return Status::ok();
      }));
    }
  }
  add_channel_bias(py, bias, n, m, pout);
  ctx.set_output(0, std::move(y));
  return Status::ok();
}

Status conv_transpose(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Tensor* x, ctx.required_input(0));
  ODB_ASSIGN_OR_RETURN(const Tensor* w, ctx.required_input(1));
  ODB_RETURN_IF_ERROR(check_conv_operands(ctx, *x, *w));
  return visit_float(x->dtype(), "ConvTranspose", [&](auto tag) {
    return conv_transpose_typed<decltype(tag)>(ctx, *x, *w, ctx.input(2));
  });
}

}  // namespace

void register_conv_transpose(KernelRegistry& r) {
  r.add("ConvTranspose", 1, conv_transpose).accumulates_in_double();
  r.add("ConvTranspose", 11, conv_transpose).accumulates_in_double().through(22);
}

}  // namespace onnxdbg::reference
