// Pad (ONNX Pad-1/2/11/13/18/19): pads (or, with negative pads, crops) each axis; modes constant,
// reflect (mirror without repeating the edge), edge (repeat the edge) and wrap (opset 19). Pads
// are an attribute before opset 11 and an input from 11 ([x1_begin, x2_begin, ..., x1_end, ...]),
// with the optional constant_value input; opset 18 adds `axes`. Negative pads crop first, then the
// remaining padding mirrors/repeats the cropped data.
#include "reference/ops/data_movement.h"

namespace onnxdbg::reference {
namespace {

Status pad(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const Tensor* x, ctx.required_input(0));
  const int64_t rank = x->rank();
  const std::string mode = ctx.attr_string("mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge" &&
      !(mode == "wrap" && ctx.opset() >= 19))
    return model_error(ctx.describe() + ": unknown mode '" + mode + "' at opset " +
                       std::to_string(ctx.opset()));
  std::vector<int64_t> pads;
  if (ctx.opset() < 2) {
    pads = ctx.attr_ints("paddings");
  } else if (ctx.opset() < 11) {
    pads = ctx.attr_ints("pads");
  } else {
    ODB_ASSIGN_OR_RETURN(pads, ints_of_input(ctx, 1, "pads"));
  }
  std::vector<int64_t> axes;
  if (ctx.opset() >= 18 && ctx.input(3)) {
    ODB_ASSIGN_OR_RETURN(auto a, ints_of_input(ctx, 3, "axes"));
    ODB_ASSIGN_OR_RETURN(axes, normalize_axes(ctx, a, rank));
  } else {
    for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
  }
  const size_t n = axes.size();
  if (pads.size() != 2 * n)
    return model_error(ctx.describe() + ": pads " + list_to_string(pads) + " must have " +
                       std::to_string(2 * n) + " entries for an input of shape " +
                       shape_to_string(x->shape()));
  std::vector<int64_t> begin(static_cast<size_t>(rank), 0), end(static_cast<size_t>(rank), 0);
  for (size_t i = 0; i < n; ++i) {
    begin[static_cast<size_t>(axes[i])] = pads[i];
    end[static_cast<size_t>(axes[i])] = pads[i + n];
  }

  // The padding value, as a one-element tensor of x's dtype.
  Tensor value(x->dtype(), {});
  if (ctx.opset() < 11) {
    const float v = ctx.attr_float("value", 0.0f);
    if (x->dtype() != DType::kString) value.set_from_double(0, v);
  } else if (const Tensor* cv = ctx.input(2)) {
    if (cv->numel() != 1 || cv->dtype() != x->dtype())
      return model_error(ctx.describe() + ": constant_value must be one " +
                         std::string(dtype_name(x->dtype())) + " value, got " +
                         std::string(dtype_name(cv->dtype())) + " of shape " +
                         shape_to_string(cv->shape()));
    copy_element(*cv, 0, value, 0);
  }

  // For each axis and output coordinate, the input coordinate it reads, or -1 for the constant.
  Shape out_shape(static_cast<size_t>(rank));
  std::vector<std::vector<int64_t>> src(static_cast<size_t>(rank));
  for (size_t d = 0; d < static_cast<size_t>(rank); ++d) {
    const int64_t dim = x->shape()[d];
    const int64_t lo = std::max<int64_t>(0, -begin[d]), hi = dim - std::max<int64_t>(0, -end[d]);
    const int64_t m = hi - lo, before = std::max<int64_t>(0, begin[d]),
                  after = std::max<int64_t>(0, end[d]);
    if (m < 0)
      return model_error(ctx.describe() + ": pads " + list_to_string(pads) +
                         " crop more than the " + std::to_string(dim) + " elements of axis " +
                         std::to_string(d) + " (input shape " + shape_to_string(x->shape()) + ")");
    if (m == 0 && (before > 0 || after > 0) && mode != "constant")
      return model_error(ctx.describe() + ": mode '" + mode + "' cannot pad axis " +
                         std::to_string(d) + ", which has no elements (input shape " +
                         shape_to_string(x->shape()) + ")");
    out_shape[d] = m + before + after;
    auto& map = src[d];
    map.resize(static_cast<size_t>(out_shape[d]));
    for (int64_t o = 0; o < out_shape[d]; ++o) {
      int64_t c = o - before;
      if (c < 0 || c >= m) {
        if (mode == "constant") {
          c = -1;
        } else if (mode == "edge") {
          c = std::clamp<int64_t>(c, 0, m - 1);
        } else if (mode == "wrap") {
          c = ((c % m) + m) % m;
        } else if (m == 1) {
          c = 0;
        } else {  // reflect: period 2(m-1)
          const int64_t p = 2 * (m - 1);
          c = ((c % p) + p) % p;
          if (c >= m) c = p - c;
        }
      }
      map[static_cast<size_t>(o)] = c < 0 ? -1 : lo + c;
    }
  }
  ODB_ASSIGN_OR_RETURN(Tensor out, make_output(ctx, x->dtype(), out_shape));
  const auto strides = strides_of(x->shape());
  int64_t i = 0;
  for_each_index(out_shape, [&](const std::vector<int64_t>& idx) {
    int64_t off = 0;
    for (size_t d = 0; d < idx.size(); ++d) {
      const int64_t s = src[d][static_cast<size_t>(idx[d])];
      if (s < 0) {
        off = -1;
        break;
      }
      off += s * strides[d];
    }
    if (off < 0)
      copy_element(value, 0, out, i++);
    else
      copy_element(*x, off, out, i++);
  });
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

}  // namespace

void register_pad(KernelRegistry& r) {
  r.add("Pad", 1, pad, HalfMode::kNative);               // paddings attribute
  r.add("Pad", 2, pad, HalfMode::kNative);               // pads attribute
  r.add("Pad", 11, pad, HalfMode::kNative);              // pads and constant_value inputs
  r.add("Pad", 18, pad, HalfMode::kNative);              // axes input
  r.add("Pad", 19, pad, HalfMode::kNative).through(25);  // wrap mode
}

}  // namespace onnxdbg::reference
