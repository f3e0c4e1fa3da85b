// Rule conv_attributes: Conv and ConvTranspose attributes that contradict the weight or each other
// (ONNX operator spec, Conv and ConvTranspose): kernel_shape against the weight's spatial dims,
// strides and dilations that are not positive, output_padding not smaller than its stride.
// The ONNX checker and libonnx 1.12's shape inference let the first and last pass silently.
#include <optional>

#include "lint/rule.h"
#include "lint/rules/window_attributes.h"

namespace onnxdbg::lint {

namespace {

// kernel_shape must list the weight's spatial dims (W is [M, C/group, k1, ..., kn]).
void check_kernel_shape(RuleContext& ctx, const GraphInfo& g, int64_t i,
                        const onnx::AttributeProto& ks, std::optional<ShapeIndex>& shapes) {
  const auto& n = g.node(i);
  if (n.input_size() < 2 || n.input(1).empty()) return;
  if (!shapes) shapes.emplace(ctx, g);
  const std::vector<int64_t>* w = shapes->find(n.input(1));
  if (!w || w->size() < 2) return;
  const std::string where = "kernel_shape " + ints_to_string(ks) + " contradicts weight '" +
                            n.input(1) + "' of shape " + dims_to_string(*w);
  const size_t spatial = w->size() - 2;
  if (static_cast<size_t>(ks.ints_size()) != spatial) {
    ctx.report(Severity::kError, g, i,
               where + ", which has " + std::to_string(spatial) +
                   " spatial dims; fix kernel_shape or remove it (the weight implies it).");
    return;
  }
  for (size_t k = 0; k < spatial; ++k) {
    const int64_t dim = (*w)[k + 2];
    if (dim >= 0 && ks.ints(static_cast<int>(k)) != dim) {
      ctx.report(Severity::kError, g, i,
                 where + " (spatial axis " + std::to_string(k) + ": " +
                     std::to_string(ks.ints(static_cast<int>(k))) + " vs " + std::to_string(dim) +
                     "); fix kernel_shape or remove it (the weight implies it).");
      return;
    }
  }
}

}  // namespace

void lint_conv_attributes(RuleContext& ctx, const GraphInfo& g) {
  std::optional<ShapeIndex> shapes;  // built on the first Conv that needs it
  for (int64_t i = 0; i < g.node_count(); ++i) {
    const auto& n = g.node(i);
    const bool transpose = n.op_type() == "ConvTranspose";
    if ((n.op_type() != "Conv" && !transpose) || !canonical_domain(n.domain()).empty()) continue;
    const Severity sev = ctx.newer_than_known() ? Severity::kWarning : Severity::kError;
    report_windows_below_one(ctx, g, i, sev, {"strides", "dilations"});
    if (const auto* ks = find_attribute(n, "kernel_shape")) {
      bool positive = true;
      for (int k = 0; k < ks->ints_size(); ++k) positive = positive && ks->ints(k) > 0;
      if (!positive)
        ctx.report(sev, g, i,
                   "kernel_shape " + ints_to_string(*ks) + " has a value below 1; every " +
                       "kernel dim must be 1 or more.");
      else
        check_kernel_shape(ctx, g, i, *ks, shapes);
    }
    if (!transpose) continue;
    // ConvTranspose: output_padding adds cells at the end of each axis that no input reaches
    // unless it is smaller than the stride (or the dilation), as runtimes require.
    const auto* op = find_attribute(n, "output_padding");
    if (!op) continue;
    const auto* st = find_attribute(n, "strides");
    const auto* dl = find_attribute(n, "dilations");
    for (int k = 0; k < op->ints_size(); ++k) {
      const int64_t stride = st && k < st->ints_size() ? st->ints(k) : 1;
      const int64_t dilation = dl && k < dl->ints_size() ? dl->ints(k) : 1;
      const int64_t pad = op->ints(k);
      if (pad < 0 || pad >= std::max(stride, dilation)) {
        ctx.report(sev, g, i,
                   "output_padding " + ints_to_string(*op) + " has " + std::to_string(pad) +
                       " on spatial axis " + std::to_string(k) + ", which must be at least 0 " +
                       "and smaller than that axis's stride (" + std::to_string(stride) +
                       ") or dilation (" + std::to_string(dilation) +
                       "); lower it or give output_shape instead.");
        break;
      }
    }
  }
}

}  // namespace onnxdbg::lint
