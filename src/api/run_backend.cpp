// api::run_backend: one model, one backend, one run, the values themselves (Python's
// onnxdbg.run). The comparison of several backends is api::run (run.cpp).
#include <chrono>

#include "backends/reference/reference_backend.h"
#include "comparator/input_gen.h"
#include "data/samples.h"
#include "layerwise/layer_values.h"
#include "onnxdbg/run.h"

namespace onnxdbg::api {
namespace {

/// A tensor over `t`'s buffer, not a copy (valid while `t` lives; never written through).
Tensor borrowed(const Tensor& t) {
  if (t.dtype() == DType::kString || t.nbytes() == 0) return t;
  auto view = Tensor::adopt(
      t.dtype(), t.shape(),
      ByteBuffer::adopt(
          const_cast<std::byte*>(t.raw()), t.nbytes(), [](void*) noexcept {}, nullptr));
  if (!view) return t;
  return std::move(*view);
}

/// The given inputs, checked against the model's graph inputs, or generated ones.
Expected<TensorMap> backend_inputs(const BackendRunOptions& o, const onnx::GraphProto& graph) {
  if (!o.inputs) return generate_inputs(graph, o.generate);
  // Borrowed, not copied: the options outlive the call (a 100 MB input costs no copy here).
  std::vector<Sample> samples(1);
  for (const auto& [name, t] : *o.inputs) samples[0].emplace(name, borrowed(t));
  ODB_RETURN_IF_ERROR(check_samples(samples, graph, DataRole::kInputs, "the given inputs"));
  return std::move(samples[0]);
}

/// Every main-graph node output on the reference (one run) or on another backend (one run with
/// them as extra outputs, typed by a reference run); graph outputs go to r.outputs.
Status run_with_intermediates(const BackendRunOptions& o, const LoadedModel& model,
                              Backend& backend, BackendRunResult& r) {
  BackendSpec ref{"reference", {}};
  if (o.backend.name == "reference") ref = o.backend;
  ODB_ASSIGN_OR_RETURN(reference::InterpreterOptions ropt, reference_options(ref));
  auto values = reference_layer_values(model, r.inputs, o.memory_budget, ropt);
  if (!values) {
    if (o.backend.name == "reference") return values.status();
    return Status(values.status().code(),
                  "the intermediate tensors' types come from a reference run, which failed: " +
                      values.status().message());
  }
  if (o.backend.name != "reference") {
    const auto t0 = std::chrono::steady_clock::now();
    ODB_ASSIGN_OR_RETURN(*values, backend_layer_values(model, backend, r.inputs, *values));
    r.run_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  for (const auto& out : model.proto.graph().output())
    if (auto it = values->find(out.name()); it != values->end()) {
      r.outputs.insert_or_assign(out.name(), std::move(it->second));
      values->erase(it);
    }
  r.intermediates = std::move(*values);
  return Status::ok();
}

}  // namespace

Expected<BackendRunResult> run_backend(const BackendRunOptions& o, const CallContext& ctx) {
  BackendRunResult r;
  r.backend = o.backend.to_string();
  ODB_ASSIGN_OR_RETURN(LoadedModel model, load_model(o.model));
  for (const auto& w : model.warnings) add_warning(r.messages, w);
  const onnx::GraphProto& graph = model.proto.graph();
  ODB_ASSIGN_OR_RETURN(auto backend, create_backend(o.backend));
  ODB_ASSIGN_OR_RETURN(r.inputs, backend_inputs(o, graph));
  r.describe = backend->describe();
  if (ctx.cancel.cancelled()) return cancelled("run cancelled before " + r.backend + " ran");
  if (ctx.progress) ctx.progress("running the model on " + r.backend);
  if (o.intermediates) {
    ODB_RETURN_IF_ERROR(run_with_intermediates(o, model, *backend, r));
    return r;
  }
  ODB_ASSIGN_OR_RETURN(auto session, backend->load(o.model));
  const SessionInfo& info = session->info();
  r.providers = info.providers;
  r.load_seconds = info.load_seconds;
  for (const auto& w : info.warnings) add_warning(r.messages, r.backend + ": " + w);
  ODB_ASSIGN_OR_RETURN(onnxdbg::SessionRunResult run, session->run(r.inputs));
  r.outputs = std::move(run.outputs);
  r.run_seconds = run.run_seconds;
  return r;
}

}  // namespace onnxdbg::api
