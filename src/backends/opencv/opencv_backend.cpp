// The OpenCV DNN backend: cv::dnn::readNetFromONNX on OpenCV's CPU path. Inputs become float32
// cv::Mat blobs (what OpenCV computes in); outputs are fetched by the graph's output names and
// reshaped to the declared shapes, since OpenCV drops or changes dims (1-D becomes 2-D).
#include "backends/opencv/opencv_backend.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <opencv2/core.hpp>
#include <opencv2/dnn.hpp>
#include <optional>
#include <regex>

#include "model/external_data.h"
#include "model/model.h"

namespace onnxdbg {
namespace {

using Clock = std::chrono::steady_clock;

/// OpenCV's message on one line (its importer nests errors as "\n> " lines).
Status cv_error(const cv::Exception& e) {
  std::string msg;
  for (char c : e.msg) {
    if (c == '\n' || c == '\r') c = ' ';
    if (c == ' ' && (msg.empty() || msg.back() == ' ')) continue;
    msg += c;
  }
  while (!msg.empty() && (msg.back() == ' ' || msg.back() == '>')) msg.pop_back();
  // Drop the source locations OpenCV prefixes to every nested message ("OpenCV(4.6.0)
  // ./modules/dnn/src/onnx/onnx_importer.cpp:1040: error: ") and the importer's own frame, so the
  // node and the innermost reason fit on one readable line.
  static const std::regex location(R"(OpenCV\([0-9.]+\) \S+:[0-9]+: error: )");
  msg = std::regex_replace(msg, location, "");
  static const std::regex handle_node(R"(\(-2:Unspecified error\) in function 'handleNode' > )");
  msg = std::regex_replace(msg, handle_node, "");
  return backend_error("OpenCV: " + msg);
}

/// The DType of a cv::Mat depth, or kUndefined.
DType dtype_of_depth(int depth) {
  switch (depth) {
    case CV_8U:
      return DType::kUint8;
    case CV_8S:
      return DType::kInt8;
    case CV_16U:
      return DType::kUint16;
    case CV_16S:
      return DType::kInt16;
    case CV_32S:
      return DType::kInt32;
    case CV_32F:
      return DType::kFloat;
    case CV_64F:
      return DType::kDouble;
    case CV_16F:
      return DType::kFloat16;
    default:
      return DType::kUndefined;
  }
}

/// Declared shape resolved against what OpenCV produced: the declared shape when it is fully
/// known (or has one unknown dim that the element count fixes) and the counts agree.
std::optional<Shape> target_shape(const ValueSignature& sig, const Shape& got, int64_t numel) {
  if (!sig.has_shape) return got;
  Shape want = sig.shape;
  int unknown = -1;
  int64_t known_product = 1;
  for (size_t i = 0; i < want.size(); ++i) {
    if (want[i] < 0) {
      if (unknown >= 0) {
        // Several symbolic dims: accept OpenCV's shape when it agrees on rank and on known dims.
        if (got.size() != want.size()) return std::nullopt;
        for (size_t j = 0; j < want.size(); ++j) {
          if (want[j] >= 0 && want[j] != got[j]) return std::nullopt;
        }
        return got;
      }
      unknown = static_cast<int>(i);
    } else {
      known_product *= want[i];
    }
  }
  if (unknown >= 0) {
    if (known_product == 0 || numel % known_product != 0) return std::nullopt;
    want[static_cast<size_t>(unknown)] = numel / known_product;
  }
  auto n = shape_numel(want);
  if (!n || *n != numel) return std::nullopt;
  return want;
}

/// The OpenCV layers that may hold each tensor of the main graph. OpenCV 4.6's importer names
/// the layer of a node "onnx_node!<node name>", or "onnx_node_output_0!<first output>" for an
/// unnamed node, and adds an Identity layer named after each graph output. Only a node's first
/// output is reachable by name (an empty list says so). Nodes the importer folds into constants
/// or fuses into others have no layer at all.
std::map<std::string, std::vector<std::string>> layer_candidates(const onnx::GraphProto& g) {
  std::map<std::string, std::vector<std::string>> out;
  for (const auto& node : g.node()) {
    for (int i = 0; i < node.output_size(); ++i) {
      if (node.output(i).empty()) continue;
      auto& c = out[node.output(i)];
      if (i != 0) continue;
      c.push_back(node.name().empty() ? "onnx_node_output_0!" + node.output(0)
                                      : "onnx_node!" + node.name());
    }
  }
  for (const auto& o : g.output()) out[o.name()].insert(out[o.name()].begin(), o.name());
  return out;
}

/// Imports an ONNX model held in memory into a CPU net.
cv::dnn::Net import_net(const std::string& bytes) {
  cv::dnn::Net net = cv::dnn::readNetFromONNX(bytes.data(), bytes.size());
  net.setPreferableBackend(cv::dnn::DNN_BACKEND_OPENCV);
  net.setPreferableTarget(cv::dnn::DNN_TARGET_CPU);
  return net;
}

class CvSession : public Session {
 public:
  // cv::dnn::Net has no move constructor; its copy shares the network (reference counted).
  CvSession(const cv::dnn::Net& net, SessionInfo info, std::vector<ValueSignature> inputs,
            std::vector<ValueSignature> outputs)
      : net_(net),
        info_(std::move(info)),
        inputs_(std::move(inputs)),
        outputs_(std::move(outputs)) {}
  /// A session whose import waits for the first run: OpenCV 4.6 refuses many graphs with
  /// symbolic input dims ("!isDynamicShape"), but imports them once the dims are fixed.
  CvSession(onnx::ModelProto deferred, SessionInfo info, std::vector<ValueSignature> inputs,
            std::vector<ValueSignature> outputs)
      : deferred_(std::move(deferred)),
        info_(std::move(info)),
        inputs_(std::move(inputs)),
        outputs_(std::move(outputs)) {}
  const SessionInfo& info() const override { return info_; }

  /// Candidate OpenCV layer names for each main-graph tensor, most specific first (see
  /// layer_candidates()).
  void set_layer_candidates(std::map<std::string, std::vector<std::string>> c) {
    layer_candidates_ = std::move(c);
  }

  Expected<SessionRunResult> run(const TensorMap& inputs) override {
    return run_observing(inputs, {});
  }

  Expected<SessionRunResult> run_observing(const TensorMap& inputs,
                                           const std::vector<std::string>& observe) override {
    for (const auto& sig : inputs_) {
      if (!inputs.count(sig.name)) {
        return invalid_argument(fmt::format("opencv: missing input '{}'", sig.name));
      }
    }
    std::optional<double> load_seconds;
    if (deferred_) ODB_RETURN_IF_ERROR(import_for(inputs, &load_seconds));
    std::vector<std::string> warnings;
    try {
      // Blobs must stay alive until forward(): setInput keeps a shallow reference.
      std::vector<Tensor> float_inputs;
      ODB_RETURN_IF_ERROR(set_inputs(inputs, float_inputs));
      std::vector<std::string> names;
      std::vector<ValueSignature> sigs = outputs_;
      for (const auto& o : outputs_) names.push_back(o.name);
      SessionRunResult result;
      result.load_seconds = load_seconds;
      for (const auto& tensor : observe) {
        const std::string layer = layer_of(tensor, result);
        if (layer.empty()) continue;
        names.push_back(layer);
        ValueSignature sig;
        sig.name = tensor;
        sigs.push_back(sig);
      }
      std::vector<cv::Mat> blobs;
      const auto t0 = Clock::now();
      net_.forward(blobs, names);
      const auto t1 = Clock::now();
      if (blobs.size() != names.size()) {
        return backend_error(fmt::format("OpenCV returned {} outputs for the model's {}",
                                         blobs.size(), names.size()));
      }
      result.run_seconds = std::chrono::duration<double>(t1 - t0).count();
      for (size_t i = 0; i < blobs.size(); ++i) {
        ODB_ASSIGN_OR_RETURN(Tensor t, from_mat(blobs[i], sigs[i], &warnings));
        result.outputs[sigs[i].name] = std::move(t);
      }
      for (auto& w : warnings) {
        if (std::find(info_.warnings.begin(), info_.warnings.end(), w) == info_.warnings.end()) {
          info_.warnings.push_back(std::move(w));
        }
      }
      return result;
    } catch (const cv::Exception& e) {
      return cv_error(e);
    }
  }

 private:
  /// Each input as a float32 blob on the net (`float_inputs` keeps their data alive until
  /// forward()). Errors: a name that is not an input, a string tensor.
  Status set_inputs(const TensorMap& inputs, std::vector<Tensor>& float_inputs) {
    float_inputs.reserve(inputs.size());
    for (const auto& [name, t] : inputs) {
      auto sig = std::find_if(inputs_.begin(), inputs_.end(),
                              [&name = name](const auto& s) { return s.name == name; });
      if (sig == inputs_.end()) {
        return invalid_argument(fmt::format("opencv: '{}' is not an input of the model", name));
      }
      if (t.dtype() == DType::kString) {
        return unsupported(fmt::format(
            "opencv: input '{}' is a string tensor; OpenCV DNN takes numbers only", name));
      }
      if (t.dtype() == DType::kFloat) {
        float_inputs.push_back(t);
      } else {
        ODB_ASSIGN_OR_RETURN(Tensor f, cast_tensor(t, DType::kFloat));
        float_inputs.push_back(std::move(f));
      }
      Tensor& f = float_inputs.back();
      std::vector<int> dims;
      for (int64_t d : f.shape()) dims.push_back(static_cast<int>(d));
      if (dims.empty()) dims.push_back(1);  // cv::Mat has no rank 0
      cv::Mat blob(static_cast<int>(dims.size()), dims.data(), CV_32F, f.raw());
      net_.setInput(blob, name);
    }
    return Status::ok();
  }

  /// The OpenCV layer that gives `tensor`, or "" with the reason in result.not_observed.
  std::string layer_of(const std::string& tensor, SessionRunResult& result) {
    auto it = layer_candidates_.find(tensor);
    if (it != layer_candidates_.end())
      for (const auto& c : it->second)
        if (net_.getLayerId(c) >= 0) return c;
    result.not_observed[tensor] =
        it == layer_candidates_.end() ? "not a tensor produced by a node of the main graph"
        : it->second.empty()
            ? "OpenCV names a layer after its node's first output only"
            : fmt::format("OpenCV has no layer '{}': it fused or folded the node away",
                          it->second.back());
    return "";
  }

  /// (Re)imports the deferred model with its input dims fixed to those of `inputs`, unless the
  /// net already has exactly these shapes; `*seconds` is the import's time when it ran. Its
  /// failure is a failed load (deferred_load_failure) with OpenCV's reason.
  Status import_for(const TensorMap& inputs, std::optional<double>* seconds) {
    std::map<std::string, Shape> shapes;
    for (const auto& [name, t] : inputs) shapes[name] = t.shape();
    if (!net_.empty() && shapes == pinned_) return Status::ok();
    onnx::ModelProto fixed = *deferred_;
    std::vector<std::string> described;
    for (auto& in : *fixed.mutable_graph()->mutable_input()) {
      auto it = shapes.find(in.name());
      if (it == shapes.end() || !in.type().has_tensor_type()) continue;
      auto* shape = in.mutable_type()->mutable_tensor_type()->mutable_shape();
      shape->clear_dim();
      for (int64_t d : it->second) shape->add_dim()->set_dim_value(d);
      described.push_back(in.name() + "=" + shape_to_string(it->second));
    }
    std::string bytes;
    if (!fixed.SerializeToString(&bytes))
      return internal_error("opencv: cannot serialize the model");
    const auto t0 = Clock::now();
    try {
      net_ = import_net(bytes);
    } catch (const cv::Exception& e) {
      net_ = cv::dnn::Net();
      return deferred_load_failure(
          cv_error(e), fmt::format(" with input shapes {} (OpenCV cannot import its symbolic "
                                   "input dims, so it is imported once the inputs fix them)",
                                   fmt::join(described, ", ")));
    }
    *seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    pinned_ = std::move(shapes);
    return Status::ok();
  }

  static Expected<Tensor> from_mat(const cv::Mat& m, const ValueSignature& sig,
                                   std::vector<std::string>* warnings) {
    const DType dt = dtype_of_depth(m.depth());
    if (dt == DType::kUndefined || m.channels() != 1) {
      return unsupported(
          fmt::format("opencv: output '{}' has OpenCV type {}, which onnxdbg does not "
                      "convert",
                      sig.name, m.type()));
    }
    const cv::Mat dense = m.isContinuous() ? m : m.clone();
    Shape got;
    for (int i = 0; i < dense.dims; ++i) got.push_back(dense.size[i]);
    const int64_t numel = static_cast<int64_t>(dense.total());
    if (got.empty() && numel == 1) got = {1};
    Shape shape = got;
    if (auto want = target_shape(sig, got, numel)) {
      shape = *want;
    } else {
      warnings->push_back(
          fmt::format("opencv: output '{}' has shape {} ({} elements) but the model declares {}; "
                      "kept OpenCV's shape",
                      sig.name, shape_to_string(got), numel, shape_to_string(sig.shape)));
    }
    if (sig.dtype != DType::kUndefined && sig.dtype != dt) {
      warnings->push_back(fmt::format("opencv: output '{}' comes back as {}; the model declares {}",
                                      sig.name, dtype_name(dt), dtype_name(sig.dtype)));
    }
    ODB_ASSIGN_OR_RETURN(Tensor t, Tensor::make(dt, shape));
    if (t.nbytes() != dense.total() * dense.elemSize()) {
      return internal_error(fmt::format("opencv: output '{}' size mismatch", sig.name));
    }
    if (t.nbytes() > 0) std::memcpy(t.raw(), dense.data, t.nbytes());
    return t;
  }

  cv::dnn::Net net_;
  std::map<std::string, std::vector<std::string>> layer_candidates_;
  std::optional<onnx::ModelProto> deferred_;
  std::map<std::string, Shape> pinned_;  // input shapes the deferred net was imported with
  SessionInfo info_;
  std::vector<ValueSignature> inputs_;
  std::vector<ValueSignature> outputs_;
};

class CvBackend : public Backend {
 public:
  explicit CvBackend(BackendSpec spec) : spec_(std::move(spec)) {}
  std::string name() const override { return "opencv"; }
  const BackendSpec& spec() const override { return spec_; }
  std::string describe() const override { return "OpenCV DNN " + std::string(CV_VERSION); }

  Expected<std::unique_ptr<Session>> do_load(
      const std::filesystem::path& model_path,
      const std::filesystem::path& external_data_dir) override {
    SessionInfo info;
    ODB_RETURN_IF_ERROR(apply_options(info));
    const auto t0 = Clock::now();  // the inlining of external data counts as loading
    // OpenCV does not expose the graph's signature; read it from the model ourselves.
    auto model = load_model(model_path, external_data_dir);
    // OpenCV 4.6 reads no external data (its importer sees empty weights): it imports the model
    // with the weights inline, which protobuf allows up to 2 GiB.
    std::string inlined;
    if (model && !external_data_locations(model->proto.graph()).empty()) {
      if (Status st = inline_external_data(model->proto, model->base_dir); !st)
        return unsupported(
            "opencv: OpenCV 4.6 reads no external data (weights in a separate "
            "file), and onnxdbg cannot pass them inline: " +
            st.message());
      model->proto.SerializeToString(&inlined);
    }
    cv::dnn::Net net;
    bool deferred = false;
    const Status import_error = import_net(model_path, inlined, net);
    info.load_seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    inlined = std::string();
    if (!model) {
      if (!import_error.is_ok()) return import_error;  // OpenCV's own words first
      return backend_error("opencv: " + model.status().to_string());
    }
    std::vector<ValueSignature> inputs = model_inputs(model->proto.graph());
    std::vector<ValueSignature> outputs = model_outputs(model->proto.graph());
    for (const auto& in : inputs) {
      if (in.dtype != DType::kFloat && in.dtype != DType::kUndefined &&
          in.dtype != DType::kString) {
        info.warnings.push_back(
            fmt::format("opencv: input '{}' ({}) is passed to OpenCV as float32", in.name,
                        dtype_name(in.dtype)));
      }
    }
    const bool dynamic = std::any_of(inputs.begin(), inputs.end(), [](const ValueSignature& in) {
      return !in.has_shape ||
             std::any_of(in.shape.begin(), in.shape.end(), [](int64_t d) { return d < 0; });
    });

    if (!import_error.is_ok()) {
      if (!dynamic) return import_error;
      deferred = true;
      info.warnings.push_back(fmt::format(
          "opencv: OpenCV cannot import the model with symbolic input dims ({}); it is imported "
          "at run time with the shapes of the inputs given",
          import_error.message()));
    }
    info.providers = {"OpenCV CPU"};
    for (const auto& o : outputs) info.output_names.push_back(o.name);
    auto candidates = layer_candidates(model->proto.graph());
    std::unique_ptr<CvSession> session;
    if (deferred) {
      session.reset(new CvSession(std::move(model->proto), std::move(info), std::move(inputs),
                                  std::move(outputs)));
    } else {
      session.reset(new CvSession(net, std::move(info), std::move(inputs), std::move(outputs)));
    }
    session->set_layer_candidates(std::move(candidates));
    return std::unique_ptr<Session>(std::move(session));
  }

 private:
  /// spec_'s options: threads= sets OpenCV's thread count; unknown ones are warnings in `info`.
  Status apply_options(SessionInfo& info) const {
    for (const auto& [key, value] : spec_.options) {
      if (key == "threads") {
        char* end = nullptr;
        const long n = std::strtol(value.c_str(), &end, 10);
        if (value.empty() || *end != '\0' || n < 0 || n > 1024)
          return invalid_argument("opencv: threads must be a whole number of threads, not '" +
                                  value + "'");
        cv::setNumThreads(static_cast<int>(n));
        continue;
      }
      info.warnings.push_back(fmt::format("opencv ignores the unknown option '{}'", key));
    }
    return Status::ok();
  }

  /// OpenCV's import of the model (from `inlined` bytes when not empty, else from the file) on its
  /// CPU backend; its exception as an error.
  static Status import_net(const std::filesystem::path& model_path, const std::string& inlined,
                           cv::dnn::Net& net) {
    try {
      net = inlined.empty() ? cv::dnn::readNetFromONNX(model_path.string())
                            : cv::dnn::readNetFromONNX(inlined.data(), inlined.size());
      net.setPreferableBackend(cv::dnn::DNN_BACKEND_OPENCV);
      net.setPreferableTarget(cv::dnn::DNN_TARGET_CPU);
      return Status::ok();
    } catch (const cv::Exception& e) {
      return cv_error(e);
    }
  }

  BackendSpec spec_;
};

}  // namespace

Expected<std::unique_ptr<Backend>> make_opencv_backend(const BackendSpec& spec) {
  return std::unique_ptr<Backend>(new CvBackend(spec));
}

}  // namespace onnxdbg
