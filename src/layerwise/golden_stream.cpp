// The golden values of the layerwise pass (see golden_stream.h): reference runs over the whole
// model or a prefix of it, and the bounded hand-over of a batch's values to a backend's side.
#include "layerwise/golden_stream.h"

#include <algorithm>
#include <new>

#include "layerwise/layer_tensors.h"

namespace onnxdbg::layerwise_detail {

Expected<GoldenSource> GoldenSource::create(const LoadedModel& model, const TensorMap& inputs,
                                            const reference::InterpreterOptions& options,
                                            const TensorMap* golden) {
  GoldenSource s;
  s.model_ = &model;
  s.options_ = options;
  s.inputs_ = &inputs;
  s.golden_ = golden;
  // Without loaded values the reference is needed at once: its errors (an op it lacks) come
  // before any backend runs.
  if (!golden) {
    ODB_ASSIGN_OR_RETURN(s.interp_,
                         reference::Interpreter::create(model.proto, model.base_dir, options));
  }
  const auto& g = model.proto.graph();
  for (int i = 0; i < g.node_size(); ++i)
    for (const auto& o : g.node(i).output()) s.producer_[o] = static_cast<size_t>(i);
  return s;
}

Status GoldenSource::run(const reference::NodeHook& hook, size_t end_node) {
  if (!golden_) return run_reference(hook, end_node);
  const auto& g = model_->proto.graph();
  const size_t end = std::min(end_node, static_cast<size_t>(g.node_size()));
  for (size_t i = 0; i < end; ++i) {
    const auto& node = g.node(static_cast<int>(i));
    for (const auto& o : node.output())
      if (auto it = golden_->find(o); !o.empty() && it != golden_->end())
        hook(node, i, o, it->second);
  }
  return Status::ok();
}

Status GoldenSource::run_reference(const reference::NodeHook& hook, size_t end_node,
                                   const TensorMap* forced) {
  if (!interp_) {
    ODB_ASSIGN_OR_RETURN(interp_,
                         reference::Interpreter::create(model_->proto, model_->base_dir, options_));
  }
  ++runs_;
  return interp_->run_prefix(*inputs_, hook, end_node, forced);
}

Expected<TensorMap> GoldenSource::capture(const std::set<std::string>& names) {
  TensorMap out;
  std::set<std::string> computed;  // what the reference must give
  size_t end_node = 0;
  for (const auto& n : names) {
    if (auto it = inputs_->find(n); it != inputs_->end()) {
      out[n] = it->second;
      continue;
    }
    if (golden_)
      if (auto it = golden_->find(n); it != golden_->end()) {
        out[n] = it->second;
        continue;
      }
    if (store_)
      if (auto t = store_->find(n)) {
        out[n] = std::move(*t);
        continue;
      }
    if (auto p = producer_.find(n); p != producer_.end()) {
      computed.insert(n);
      end_node = std::max(end_node, p->second + 1);
    }
  }
  if (end_node == 0) return out;
  // With loaded golden values, the loaded ones replace the reference's as it goes: a value the
  // file lacks is computed from the golden values upstream, not from the model's own (which
  // carry the error an isolated node would then take for its own).
  ODB_RETURN_IF_ERROR(run_reference(
      [&](const onnx::NodeProto&, size_t, const std::string& tensor, const Tensor& value) {
        if (computed.count(tensor)) out[tensor] = value;
      },
      end_node, golden_));
  return out;
}

GoldenStream::GoldenStream(const std::vector<LayerTensor>& tensors, size_t begin, size_t end,
                           uint64_t window)
    : window_(window) {
  for (size_t i = begin; i < end; ++i) {
    index_.emplace(tensors[i].name, i);
    end_node_ = std::max(end_node_, tensors[i].node_index + 1);
  }
}

Status GoldenStream::produce(GoldenSource& src) {
  Status st;
  try {
    st = src.run([this](const onnx::NodeProto&, size_t, const std::string& name,
                        const Tensor& value) { offer(name, value); },
                 end_node_);
  } catch (const std::bad_alloc&) {
    st = invalid_argument("out of memory while copying golden values; lower --layerwise-memory");
  }
  std::lock_guard<std::mutex> lock(mu_);
  done_ = true;
  cv_.notify_all();
  return st;
}

std::optional<Tensor> GoldenStream::take(size_t index) {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    while (!held_.empty() && held_.front().first < index) pop_front();
    if (!held_.empty()) {
      if (held_.front().first != index) return std::nullopt;
      Tensor t = std::move(held_.front().second);
      pop_front();
      return t;
    }
    if (done_ || (offered_ && last_offered_ >= index)) return std::nullopt;
    cv_.wait(lock);
  }
}

void GoldenStream::close() {
  std::lock_guard<std::mutex> lock(mu_);
  closed_ = true;
  held_.clear();
  held_bytes_ = 0;
  cv_.notify_all();
}

void GoldenStream::pop_front() {
  held_bytes_ -= tensor_bytes(held_.front().second);
  held_.pop_front();
  cv_.notify_all();
}

void GoldenStream::offer(const std::string& name, const Tensor& value) {
  auto it = index_.find(name);
  if (it == index_.end()) return;
  const uint64_t bytes = tensor_bytes(value);
  {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return closed_ || held_.empty() || held_bytes_ + bytes <= window_; });
    if (closed_) return;
  }
  Tensor copy = value;  // outside the lock: the backend's side goes on meanwhile
  std::lock_guard<std::mutex> lock(mu_);
  if (closed_) return;
  held_bytes_ += bytes;
  held_.emplace_back(it->second, std::move(copy));
  offered_ = true;
  last_offered_ = it->second;
  cv_.notify_all();
}

}  // namespace onnxdbg::layerwise_detail
