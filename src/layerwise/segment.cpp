// Backend runs by segment (see pass.h): each batch's tensors computed by the backend from the
// nodes that produce them alone, fed its own values of what earlier segments computed, so that the
// backend computes every node once over the whole pass instead of the whole model per batch.
#include <fmt/format.h>

#include <algorithm>

#include "layerwise/golden_store.h"
#include "layerwise/node_models.h"
#include "layerwise/pass.h"
#include "model/graph.h"

namespace onnxdbg::layerwise_detail {

std::vector<Batch> Pass::backend_batches(const BackendSpec& spec) const {
  // Extra graph outputs: at most max_extra_outputs per run; OpenCV reads any number of layers by
  // name in one run.
  return make_batches(
      rep_.tensors, limit_,
      observes_by_name(spec) ? SIZE_MAX : std::max<size_t>(1, opt_.max_extra_outputs));
}

CarriedValues Pass::plan_segments(size_t k, const BackendSpec& spec) {
  CarriedValues c;
  // The golden values must come without a reference run beside each segment: from the store of
  // the one reference run, or loaded.
  const bool golden_at_hand = opt_.golden || (store_ && store_->covered() == rep_.tensors.size());
  if (!golden_at_hand || fp16_[k] || observes_by_name(spec) || rep_.tensors.empty()) return c;
  // A float16 tensor is read through a Cast to float32 of its own (batch_model), which a later
  // segment could not be fed back as the value the model computed.
  for (const auto& t : rep_.tensors)
    if (t.dtype == DType::kFloat16) return c;
  // One batch: its segment would be the whole graph; the whole model, as before, also tells
  // whether asking for the outputs changed the backend's optimized graph.
  const std::vector<Batch> batches = backend_batches(spec);
  if (batches.size() < 2) return c;
  std::set<std::string> compared;
  for (const auto& t : rep_.tensors) compared.insert(t.name);
  for (const auto& b : batches)
    for (auto& name : segment_plan(b, nullptr)) {
      if (!compared.count(name)) {  // loaded golden values without this one
        c.fallback = fmt::format(
            "the batches could not run as segments: a later batch reads '{}', which is not a "
            "compared tensor (it has no golden value, or is no tensor), so no run returns it",
            name);
        c.needed.clear();
        return c;
      }
      c.needed.insert(std::move(name));
    }
  auto store = new_spill_file(/*golden=*/false);
  if (store) c.store = std::move(*store);
  return c;
}

std::vector<std::string> Pass::segment_plan(const Batch& batch, std::vector<int>* nodes) const {
  const auto& g = model_.proto.graph();
  const NameSet initializers = initializer_names(g);
  const std::set<std::string> constants = constant_node_outputs(g);
  const auto producer = producers(g);
  // From the node after the previous batch's last one (nodes without a compared output between
  // two batches are computed too), or from the producer of the batch's first tensor when that
  // node's other outputs are in the previous batch.
  const size_t last = rep_.tensors[batch.end - 1].node_index;
  const size_t first = batch.begin == 0 ? 0
                                        : std::min(rep_.tensors[batch.begin].node_index,
                                                   rep_.tensors[batch.begin - 1].node_index + 1);
  std::set<int> chosen;
  std::set<std::string> produced;
  for (size_t i = first; i <= last; ++i) {
    chosen.insert(static_cast<int>(i));
    for (const auto& o : g.node(static_cast<int>(i)).output()) produced.insert(o);
  }
  std::vector<std::string> carried;
  std::set<std::string> seen;
  for (size_t i = first; i <= last; ++i)
    for (const auto& name : node_reads(g.node(static_cast<int>(i)))) {
      if (produced.count(name) || initializers.count(name) || !seen.insert(name).second) continue;
      if (constants.count(name)) {
        chosen.insert(producer.at(name));  // model data: the Constant node comes along
      } else if (!inputs_.count(name)) {
        carried.push_back(name);
      }
    }
  if (nodes) nodes->assign(chosen.begin(), chosen.end());
  return carried;
}

Expected<onnx::ModelProto> Pass::segment_model(const Batch& batch, const GoldenStore& carried,
                                               TensorMap* feeds) const {
  const onnx::ModelProto& p = model_.proto;
  const auto& g = p.graph();
  std::vector<int> nodes;
  const std::vector<std::string> reads = segment_plan(batch, &nodes);
  onnx::ModelProto m;
  m.set_ir_version(p.ir_version());
  *m.mutable_opset_import() = p.opset_import();
  *m.mutable_functions() = p.functions();
  onnx::GraphProto* mg = m.mutable_graph();
  mg->set_name(g.name());
  std::set<std::string> read;
  for (int i : nodes) {
    *mg->add_node() = g.node(i);
    for (const auto& n : node_reads(g.node(i))) read.insert(n);
  }
  for (const auto& t : g.initializer())
    if (read.count(t.name())) *mg->add_initializer() = t;
  for (const auto& t : g.sparse_initializer())
    if (read.count(t.values().name())) *mg->add_sparse_initializer() = t;
  for (const auto& in : g.input())
    if (read.count(in.name()) && inputs_.count(in.name())) {
      *mg->add_input() = in;
      (*feeds)[in.name()] = inputs_.at(in.name());
    }
  for (const auto& name : reads) {
    std::optional<Tensor> v = carried.find(name);
    if (!v) return not_found("the backend's value of '" + name + "' was not kept");
    set_tensor_type(mg->add_input(), name, v->dtype(), &v->shape());
    (*feeds)[name] = std::move(*v);
  }
  for (size_t i = batch.begin; i < batch.end; ++i)
    set_tensor_type(mg->add_output(), rep_.tensors[i].name, rep_.tensors[i].dtype, nullptr);
  std::set<std::string> produced;
  for (const auto& n : mg->node())
    for (const auto& o : n.output()) produced.insert(o);
  for (const auto& vi : g.value_info())
    if (produced.count(vi.name())) *mg->add_value_info() = vi;
  return m;
}

}  // namespace onnxdbg::layerwise_detail
