// Scan (ONNX Scan-8/9/11/16): runs `body` once per slice of the scan inputs, threading N state
// values through the iterations; scan outputs are the per-iteration values stacked along their
// axis. Opset 8 adds a leading batch axis (scanning axis 1 of each batch item) and directions;
// from 9 there is no batch axis and scan_input/output_axes and _directions choose the layout.
#include "reference/ops/subgraph_util.h"
#include "reference/run_watch.h"

namespace onnxdbg::reference {
namespace {

struct ScanLayout {
  std::vector<int64_t> in_axes, in_dirs, out_axes, out_dirs;
};

// One Scan-9 style run: returns the N final states then the K stacked scan outputs.
Expected<std::vector<Tensor>> run_scan(KernelContext& ctx, const onnx::GraphProto& body,
                                       std::vector<Tensor> states,
                                       const std::vector<const Tensor*>& scan_in,
                                       const ScanLayout& l) {
  const size_t n = states.size(), m = scan_in.size();
  const size_t k_out = static_cast<size_t>(body.output_size()) - n;
  int64_t len = -1;
  std::vector<int64_t> axes(m);
  for (size_t j = 0; j < m; ++j) {
    const int64_t a = j < l.in_axes.size() ? l.in_axes[j] : 0;
    ODB_ASSIGN_OR_RETURN(axes[j], normalize_axis_of(ctx, a, scan_in[j]->rank()));
    const int64_t d = scan_in[j]->dim(axes[j]);
    if (len >= 0 && d != len)
      return model_error(ctx.describe() + ": scan input " + std::to_string(j) + " has " +
                         std::to_string(d) + " slices but scan input 0 has " + std::to_string(len));
    len = d;
  }
  if (len < 0) return model_error(ctx.describe() + " has no scan inputs");
  std::vector<std::vector<Tensor>> outs(k_out);
  for (int64_t t = 0; t < len; ++t) {
    // The watcher's progress line and --max-iterations (reference/run_watch.h).
    ODB_RETURN_IF_ERROR(note_iteration(ctx.node(), t, len, body.node_size()));
    std::vector<Tensor> in = std::move(states);
    for (size_t j = 0; j < m; ++j) {
      const bool rev = j < l.in_dirs.size() && l.in_dirs[j] != 0;
      in.push_back(take_along(*scan_in[j], axes[j], rev ? len - 1 - t : t));
    }
    auto res = ctx.run_subgraph(body, std::move(in));
    if (!res)
      return std::move(res).status().with_context("while running iteration " + std::to_string(t) +
                                                  " of the body of " + ctx.describe());
    states.assign(std::make_move_iterator(res->begin()),
                  std::make_move_iterator(res->begin() + static_cast<int64_t>(n)));
    for (size_t k = 0; k < k_out; ++k) outs[k].push_back(std::move((*res)[n + k]));
  }
  end_iterations(ctx.node());
  std::vector<Tensor> result = std::move(states);
  for (size_t k = 0; k < k_out; ++k) {
    if (k < l.out_dirs.size() && l.out_dirs[k] != 0) std::reverse(outs[k].begin(), outs[k].end());
    const int64_t axis = k < l.out_axes.size() ? l.out_axes[k] : 0;
    ODB_ASSIGN_OR_RETURN(Tensor s,
                         stack_along(ctx, outs[k], axis, body.output(static_cast<int>(n + k))));
    result.push_back(std::move(s));
  }
  return result;
}

Status scan(KernelContext& ctx) {
  ODB_ASSIGN_OR_RETURN(const onnx::GraphProto* body, graph_attr(ctx, "body"));
  const int64_t m = ctx.attr_int("num_scan_inputs", -1);
  const size_t first = ctx.opset() < 9 ? 1 : 0;  // Scan-8 starts with sequence_lens
  if (m < 1 || static_cast<size_t>(m) + first > ctx.num_inputs())
    return model_error(ctx.describe() + ": num_scan_inputs " + std::to_string(m) +
                       " does not fit its " + std::to_string(ctx.num_inputs()) + " inputs");
  const size_t n = ctx.num_inputs() - first - static_cast<size_t>(m);
  if (static_cast<size_t>(body->input_size()) != n + static_cast<size_t>(m) ||
      static_cast<size_t>(body->output_size()) != ctx.num_outputs() || ctx.num_outputs() < n)
    return model_error(ctx.describe() + ": the body's " + std::to_string(body->input_size()) +
                       " inputs and " + std::to_string(body->output_size()) +
                       " outputs do not match the node's " + std::to_string(n) + " states, " +
                       std::to_string(m) + " scan inputs and " + std::to_string(ctx.num_outputs()) +
                       " outputs");
  std::vector<Tensor> states;
  std::vector<const Tensor*> scan_in;
  for (size_t i = 0; i < n; ++i) {
    ODB_ASSIGN_OR_RETURN(const Tensor* t, ctx.required_input(first + i));
    states.push_back(*t);
  }
  for (size_t j = 0; j < static_cast<size_t>(m); ++j) {
    ODB_ASSIGN_OR_RETURN(const Tensor* t, ctx.required_input(first + n + j));
    scan_in.push_back(t);
  }
  ScanLayout l;
  if (ctx.opset() >= 9) {
    l.in_axes = ctx.attr_ints("scan_input_axes");
    l.in_dirs = ctx.attr_ints("scan_input_directions");
    l.out_axes = ctx.attr_ints("scan_output_axes");
    l.out_dirs = ctx.attr_ints("scan_output_directions");
    ODB_ASSIGN_OR_RETURN(auto res, run_scan(ctx, *body, std::move(states), scan_in, l));
    for (size_t i = 0; i < res.size(); ++i) ctx.set_output(i, std::move(res[i]));
    return Status::ok();
  }
  // Scan-8: axis 0 of every state and scan input is a batch axis; each batch item is scanned
  // along its axis 0 (axis 1 of the input) and the results are stacked back along axis 0.
  l.in_dirs = ctx.attr_ints("directions");
  int64_t batch = -1;
  for (const Tensor* t : scan_in) {
    if (t->rank() < 2)
      return model_error(ctx.describe() + ": Scan-8 inputs need a batch and a scan axis");
    if (batch >= 0 && t->dim(0) != batch)
      return model_error(ctx.describe() + ": Scan-8 inputs disagree on the batch size (axis 0: " +
                         std::to_string(batch) + " and " + std::to_string(t->dim(0)) + ")");
    batch = t->dim(0);
  }
  for (const Tensor& s : states)
    if (s.rank() < 1 || s.dim(0) != batch)
      return model_error(ctx.describe() + ": Scan-8 state of shape " + shape_to_string(s.shape()) +
                         " has not the batch size " + std::to_string(batch) +
                         " of the scan inputs on axis 0");
  if (const Tensor* sl = ctx.input(0)) {
    ODB_ASSIGN_OR_RETURN(auto lens, ints_of_input(ctx, 0, "sequence_lens"));
    for (int64_t v : lens)
      if (v != scan_in[0]->dim(1))
        return unsupported(ctx.describe() + ": sequence_lens shorter than the scan axis (" +
                           list_to_string(lens) + ") are not supported");
    (void)sl;
  }
  std::vector<std::vector<Tensor>> per_output(ctx.num_outputs());
  for (int64_t b = 0; b < batch; ++b) {
    std::vector<Tensor> st;
    st.reserve(states.size());
    for (const Tensor& s : states) st.push_back(take_along(s, 0, b));
    std::vector<Tensor> sc;
    sc.reserve(scan_in.size());
    for (const Tensor* t : scan_in) sc.push_back(take_along(*t, 0, b));
    std::vector<const Tensor*> sc_ptr;
    sc_ptr.reserve(sc.size());
    for (const Tensor& t : sc) sc_ptr.push_back(&t);
    ODB_ASSIGN_OR_RETURN(auto res, run_scan(ctx, *body, std::move(st), sc_ptr, l));
    for (size_t i = 0; i < res.size(); ++i) per_output[i].push_back(std::move(res[i]));
  }
  for (size_t i = 0; i < per_output.size(); ++i) {
    ODB_ASSIGN_OR_RETURN(Tensor t,
                         stack_along(ctx, per_output[i], 0, body->output(static_cast<int>(i))));
    ctx.set_output(i, std::move(t));
  }
  return Status::ok();
}

}  // namespace

void register_scan(KernelRegistry& r) {
  r.add("Scan", 8, scan, HalfMode::kNative);              // batch axis, sequence_lens
  r.add("Scan", 9, scan, HalfMode::kNative).through(25);  // scan_input/output_axes and _directions
}

}  // namespace onnxdbg::reference
