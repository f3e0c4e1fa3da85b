// Rule axis_range: an `axis` attribute outside the range its op allows for the input's rank r
// (ONNX operator spec: [-r, r-1] for most ops, [-r, r] for Flatten, [-r-1, r] for OneHot). An
// axis that fits no tensor at all (beyond 32 bits) is an error even where the rank is unknown.
#include <limits>
#include <map>
#include <optional>

#include "lint/rule.h"

namespace onnxdbg::lint {

namespace {

// Ops of the default domain whose `axis` indexes input 0's dims: how far past r-1 it may go
// (Flatten splits before dim r; OneHot inserts a new axis into a rank r+1 output).
const std::map<std::string, int>& axis_ops() {
  static const std::map<std::string, int> kOps = {{"ArgMax", 0},
                                                  {"ArgMin", 0},
                                                  {"Compress", 0},
                                                  {"Concat", 0},
                                                  {"Flatten", 1},
                                                  {"Gather", 0},
                                                  {"GatherElements", 0},
                                                  {"Hardmax", 0},
                                                  {"LayerNormalization", 0},
                                                  {"LogSoftmax", 0},
                                                  {"LpNormalization", 0},
                                                  {"OneHot", 1},
                                                  {"Scatter", 0},
                                                  {"ScatterElements", 0},
                                                  {"Softmax", 0},
                                                  {"Split", 0},
                                                  {"TopK", 0}};
  return kOps;
}

}  // namespace

void lint_axis_range(RuleContext& ctx, const GraphInfo& g) {
  std::optional<ShapeIndex> shapes;  // built on the first node that needs a rank
  for (int64_t i = 0; i < g.node_count(); ++i) {
    const auto& n = g.node(i);
    if (!canonical_domain(n.domain()).empty()) continue;
    auto op = axis_ops().find(n.op_type());
    if (op == axis_ops().end()) continue;
    const auto* a = find_attribute(n, "axis");
    if (!a || a->type() != onnx::AttributeProto::INT || n.input_size() == 0) continue;
    const int64_t axis = a->i();
    // OneHot's axis counts in the output (rank r+1): the lower bound moves by one too.
    const int64_t extra = op->second;
    const int64_t low_extra = n.op_type() == "OneHot" ? 1 : 0;
    if (axis > std::numeric_limits<int32_t>::max() || axis < std::numeric_limits<int32_t>::min()) {
      ctx.report(Severity::kError, g, i,
                 "axis " + std::to_string(axis) + " is out of range for any tensor; use an " +
                     "axis within the rank of input '" + n.input(0) + "'.");
      continue;
    }
    if (!shapes) shapes.emplace(ctx, g);
    const auto* dims = shapes->find(n.input(0));
    if (!dims) continue;
    const auto r = static_cast<int64_t>(dims->size());
    const int64_t low = -r - low_extra, high = r - 1 + extra;
    if (axis < low || axis > high)
      ctx.report(Severity::kError, g, i,
                 "axis " + std::to_string(axis) + " is out of range for input '" + n.input(0) +
                     "' of rank " + std::to_string(r) + "; " + n.op_type() + " takes an axis in [" +
                     std::to_string(low) + ", " + std::to_string(high) + "].");
  }
}

}  // namespace onnxdbg::lint
