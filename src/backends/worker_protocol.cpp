// Framing and pipe I/O of the onnxdbg <-> onnxdbg-worker protocol (format in worker_protocol.h).
// Every blocking step polls against the caller's deadline, so a hung peer cannot hang us.
#include "backends/worker_protocol.h"

#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "model/model.h"

namespace onnxdbg::worker {
namespace {

constexpr char kMagic[4] = {'O', 'D', 'B', 'W'};
constexpr size_t kPrefixBytes = 16;
constexpr uint32_t kMaxHeaderBytes = 64u << 20;

/// Blocks SIGPIPE in this thread for its lifetime and discards a SIGPIPE raised meanwhile, so a
/// write to a dead worker reports EPIPE instead of killing onnxdbg. Thread-local on purpose: the
/// library does not change the process's signal dispositions behind the caller's back.
class SigpipeBlock {
 public:
  SigpipeBlock() {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &set, &old_);
    sigset_t pending;
    sigpending(&pending);
    was_pending_ = sigismember(&pending, SIGPIPE) == 1;
  }
  ~SigpipeBlock() {
    if (!was_pending_) {
      sigset_t set;
      sigemptyset(&set);
      sigaddset(&set, SIGPIPE);
      const timespec zero{0, 0};
      while (sigtimedwait(&set, nullptr, &zero) == -1 && errno == EINTR) {
      }
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  SigpipeBlock(const SigpipeBlock&) = delete;
  SigpipeBlock& operator=(const SigpipeBlock&) = delete;

 private:
  sigset_t old_;
  bool was_pending_ = false;
};

/// Waits until `fd` is ready for `events` or the deadline passes. Returns false on timeout.
bool wait_ready(int fd, short events, Deadline deadline) {
  if (!deadline) return true;  // the fd is blocking; read/write will wait
  for (;;) {
    const auto left = *deadline - Clock::now();
    if (left <= Clock::duration::zero()) return false;
    const auto ms = std::chrono::ceil<std::chrono::milliseconds>(left).count();
    pollfd p{fd, events, 0};
    const int r = poll(&p, 1, static_cast<int>(std::min<int64_t>(ms, 1 << 30)));
    if (r > 0) return true;           // ready, or POLLHUP/POLLERR: the next read/write says which
    if (r == 0) continue;             // re-check the clock; poll may wake a little early
    if (errno != EINTR) return true;  // let the read/write report the error
  }
}

IoOutcome os_error(const char* what) {
  return {IoResult::kError, std::string(what) + ": " + std::strerror(errno)};
}

IoOutcome write_all(int fd, const char* data, size_t n, Deadline deadline) {
  while (n > 0) {
    if (!wait_ready(fd, POLLOUT, deadline)) return {IoResult::kTimeout, {}};
    const ssize_t w = ::write(fd, data, std::min<size_t>(n, 1 << 20));
    if (w < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      if (errno == EPIPE) return {IoResult::kEof, {}};
      return os_error("write to worker pipe");
    }
    data += w;
    n -= static_cast<size_t>(w);
  }
  return {};
}

/// Reads exactly n bytes; kEof when the writer closed its end first.
IoOutcome read_all(int fd, char* data, size_t n, Deadline deadline) {
  while (n > 0) {
    if (!wait_ready(fd, POLLIN, deadline)) return {IoResult::kTimeout, {}};
    const ssize_t r = ::read(fd, data, std::min<size_t>(n, 1 << 20));
    if (r < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return os_error("read from worker pipe");
    }
    if (r == 0) return {IoResult::kEof, {}};
    data += r;
    n -= static_cast<size_t>(r);
  }
  return {};
}

}  // namespace

bool is_isolation_option(const std::string& key) {
  return std::find(std::begin(kIsolationOptions), std::end(kIsolationOptions), key) !=
         std::end(kIsolationOptions);
}

namespace {

/// The tensors of a frame in payload order, each with its name; not owned.
using TensorList = std::vector<std::pair<std::string, const Tensor*>>;

IoOutcome write_tensor_list(int fd, const nlohmann::json& header, const TensorList& tensors,
                            Deadline deadline) {
  // Numeric tensors travel as their raw bytes (no copy: written straight from the Tensor), which
  // matters when a layerwise run moves hundreds of megabytes; strings as a TensorProto.
  std::vector<std::string> protos;
  protos.reserve(tensors.size());
  nlohmann::json h = header;
  h["tensors"] = nlohmann::json::array();
  uint64_t payload_bytes = 0;
  for (const auto& [name, tp] : tensors) {
    const Tensor& t = *tp;
    if (t.dtype() != DType::kString) {
      h["tensors"].push_back({{"name", name},
                              {"bytes", t.nbytes()},
                              {"dtype", static_cast<int>(t.dtype())},
                              {"shape", t.shape()}});
      payload_bytes += t.nbytes();
      protos.emplace_back();
      continue;
    }
    std::string bytes;
    if (!tensor_to_proto(t, name).SerializeToString(&bytes)) {
      return {IoResult::kError, "cannot serialize tensor '" + name + "' (over 2 GiB?)"};
    }
    h["tensors"].push_back({{"name", name}, {"bytes", bytes.size()}});
    payload_bytes += bytes.size();
    protos.push_back(std::move(bytes));
  }
  const std::string text = h.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::string prefix(kPrefixBytes, '\0');
  const auto header_bytes = static_cast<uint32_t>(text.size());
  std::memcpy(prefix.data(), kMagic, 4);
  std::memcpy(prefix.data() + 4, &header_bytes, 4);
  std::memcpy(prefix.data() + 8, &payload_bytes, 8);
  prefix += text;

  SigpipeBlock block;
  IoOutcome o = write_all(fd, prefix.data(), prefix.size(), deadline);
  for (size_t i = 0; o.result == IoResult::kOk && i < tensors.size(); ++i) {
    const Tensor& t = *tensors[i].second;
    if (t.dtype() != DType::kString) {
      o = write_all(fd, reinterpret_cast<const char*>(t.raw()), t.nbytes(), deadline);
    } else {
      o = write_all(fd, protos[i].data(), protos[i].size(), deadline);
    }
  }
  return o;
}

/// Adds `t` to `list` under the next payload name ("0", "1", ..) and returns that name.
std::string add_tensor(const Tensor& t, TensorList* list) {
  std::string name = std::to_string(list->size());
  list->emplace_back(name, &t);
  return name;
}

nlohmann::json map_to_json(const Map& m, TensorList* list) {
  return {{"keys", add_tensor(m.keys, list)}, {"values", add_tensor(m.values, list)}};
}

/// The header form of `v` (see worker_protocol.h), its tensors added to `list`.
Expected<nlohmann::json> value_to_json(const Value& v, TensorList* list, bool in_optional) {
  switch (v.kind()) {
    case Value::Kind::kTensor:
      return nlohmann::json{{"tensor", add_tensor(v.tensor(), list)}};
    case Value::Kind::kSequence: {
      const Sequence& s = v.sequence();
      nlohmann::json j = {{"elem_type", static_cast<int>(s.elem_type)}};
      nlohmann::json elems = nlohmann::json::array();
      if (s.holds_maps()) {
        j["key_type"] = static_cast<int>(s.map_key_type);
        for (const Map& m : s.maps) elems.push_back(map_to_json(m, list));
      } else {
        for (const Tensor& t : s.tensors) elems.push_back(add_tensor(t, list));
      }
      j["sequence"] = std::move(elems);
      return j;
    }
    case Value::Kind::kMap:
      if (in_optional) return internal_error("an optional holding a map");
      return nlohmann::json{{"map", map_to_json(v.map(), list)}};
    case Value::Kind::kOptional: {
      if (in_optional) return internal_error("an optional holding an optional");
      if (!v.has_element()) return nlohmann::json{{"optional", nullptr}};
      ODB_ASSIGN_OR_RETURN(nlohmann::json inner, value_to_json(v.element(), list, true));
      return nlohmann::json{{"optional", std::move(inner)}};
    }
  }
  return internal_error("unknown value kind");
}

/// Rebuilds values from header["values"], moving their tensors out of `tensors`. Throws
/// nlohmann::json exceptions for wrongly typed fields; returns the reason for other faults.
class ValueDecoder {
 public:
  explicit ValueDecoder(TensorMap* tensors) : tensors_(tensors) {}

  std::string decode(const nlohmann::json& values, ValueMap* out) {
    if (!values.is_object()) return "\"values\" is not an object";
    for (const auto& [name, j] : values.items()) {
      Value v;
      std::string err = value(j, /*in_optional=*/false, &v);
      if (!err.empty()) return "value '" + name + "': " + err;
      out->emplace(name, std::move(v));
    }
    if (!tensors_->empty()) return "tensor '" + tensors_->begin()->first + "' belongs to no value";
    return {};
  }

 private:
  std::string tensor(const nlohmann::json& j, Tensor* t) {
    const std::string name = j.get<std::string>();
    auto node = tensors_->extract(name);
    if (node.empty()) return "names tensor '" + name + "', which the frame lacks or gave already";
    *t = std::move(node.mapped());
    return {};
  }

  static std::string dtype(const nlohmann::json& j, DType* t) {
    const int v = j.get<int>();
    if (v == 0) {
      *t = DType::kUndefined;
      return {};
    }
    auto d = dtype_from_onnx(v);
    if (!d) return "unknown element type " + std::to_string(v);
    *t = *d;
    return {};
  }

  std::string map(const nlohmann::json& j, Map* m) {
    if (!j.is_object()) return "a map is not an object";
    std::string err = tensor(j.at("keys"), &m->keys);
    if (err.empty()) err = tensor(j.at("values"), &m->values);
    if (!err.empty()) return err;
    if (m->keys.rank() != 1 || m->values.rank() != 1 || m->keys.numel() != m->values.numel())
      return "a map's keys and values are not 1-D tensors of one length";
    return {};
  }

  std::string value(const nlohmann::json& j, bool in_optional, Value* out) {
    if (!j.is_object() || j.size() == 0) return "not a value description";
    if (j.contains("tensor")) {
      if (j.size() != 1) return "a tensor with other fields";
      Tensor t;
      std::string err = tensor(j.at("tensor"), &t);
      if (!err.empty()) return err;
      *out = Value(std::move(t));
      return {};
    }
    if (j.contains("sequence")) {
      Sequence s;
      std::string err = dtype(j.at("elem_type"), &s.elem_type);
      if (!err.empty()) return err;
      const auto& elems = j.at("sequence");
      if (!elems.is_array()) return "a sequence is not an array";
      if (j.contains("key_type")) {
        err = dtype(j.at("key_type"), &s.map_key_type);
        if (!err.empty()) return err;
        if (s.map_key_type == DType::kUndefined) return "a sequence of maps without a key type";
        for (const auto& e : elems) {
          Map m;
          err = map(e, &m);
          if (!err.empty()) return err;
          s.maps.push_back(std::move(m));
        }
      } else {
        for (const auto& e : elems) {
          Tensor t;
          err = tensor(e, &t);
          if (!err.empty()) return err;
          if (s.elem_type != DType::kUndefined && t.dtype() != s.elem_type)
            return "a sequence of " + std::string(dtype_name(s.elem_type)) + " holds a " +
                   std::string(dtype_name(t.dtype())) + " tensor";
          s.tensors.push_back(std::move(t));
        }
      }
      *out = Value(std::move(s));
      return {};
    }
    if (j.contains("map")) {
      if (in_optional) return "an optional holding a map";
      Map m;
      std::string err = map(j.at("map"), &m);
      if (!err.empty()) return err;
      *out = Value(std::move(m));
      return {};
    }
    if (j.contains("optional")) {
      if (in_optional) return "an optional holding an optional";
      const auto& inner = j.at("optional");
      if (inner.is_null()) {
        *out = Value::none();
        return {};
      }
      Value v;
      std::string err = value(inner, /*in_optional=*/true, &v);
      if (!err.empty()) return err;
      *out = Value::optional_of(std::move(v));
      return {};
    }
    return "not a value description";
  }

  TensorMap* tensors_;
};

}  // namespace

IoOutcome write_frame(int fd, const nlohmann::json& header, const TensorMap& tensors,
                      Deadline deadline) {
  TensorList list;
  list.reserve(tensors.size());
  for (const auto& [name, t] : tensors) list.emplace_back(name, &t);
  return write_tensor_list(fd, header, list, deadline);
}

IoOutcome write_value_frame(int fd, const nlohmann::json& header, const ValueMap& values,
                            Deadline deadline) {
  TensorList list;
  nlohmann::json h = header;
  h["values"] = nlohmann::json::object();
  for (const auto& [name, v] : values) {
    auto j = value_to_json(v, &list, /*in_optional=*/false);
    if (!j) return {IoResult::kError, "value '" + name + "': cannot carry " + j.status().message()};
    h["values"][name] = std::move(*j);
  }
  return write_tensor_list(fd, h, list, deadline);
}

IoOutcome read_frame(int fd, Frame* frame, Deadline deadline, const TensorSink* sink) {
  char prefix[kPrefixBytes];
  IoOutcome o = read_all(fd, prefix, kPrefixBytes, deadline);
  if (o.result != IoResult::kOk) return o;
  if (std::memcmp(prefix, kMagic, 4) != 0) {
    return {IoResult::kError,
            "malformed frame: bad magic bytes (something else wrote to the pipe)"};
  }
  uint32_t header_bytes;
  uint64_t payload_bytes;
  std::memcpy(&header_bytes, prefix + 4, 4);
  std::memcpy(&payload_bytes, prefix + 8, 8);
  if (header_bytes > kMaxHeaderBytes)
    return {IoResult::kError, "malformed frame: header too large"};

  std::string text(header_bytes, '\0');
  o = read_all(fd, text.data(), text.size(), deadline);
  if (o.result != IoResult::kOk) return o;

  try {
    frame->header = nlohmann::json::parse(text);
    frame->tensors.clear();
    uint64_t left = payload_bytes;
    for (const auto& entry : frame->header.value("tensors", nlohmann::json::array())) {
      const std::string name = entry.at("name").get<std::string>();
      const uint64_t bytes = entry.at("bytes").get<uint64_t>();
      if (bytes > left) {
        return {IoResult::kError, "malformed frame: tensor sizes exceed the payload"};
      }
      left -= bytes;
      if (entry.contains("dtype")) {  // raw bytes of a numeric tensor, read in place
        // Uninitialised: every byte is read from the pipe next.
        auto t = Tensor::make_uninitialized(static_cast<DType>(entry.at("dtype").get<int>()),
                                            entry.at("shape").get<Shape>());
        if (!t || t->dtype() == DType::kString || t->nbytes() != bytes) {
          return {IoResult::kError, "malformed frame: tensor '" + name + "' has a bad size"};
        }
        o = read_all(fd, reinterpret_cast<char*>(t->raw()), bytes, deadline);
        if (o.result != IoResult::kOk) return o;
        if (sink)
          (*sink)(name, std::move(*t));
        else
          frame->tensors[name] = std::move(*t);
        continue;
      }
      if (bytes > static_cast<uint64_t>(INT32_MAX))
        return {IoResult::kError, "malformed frame: tensor '" + name + "' is too large"};
      std::string payload(bytes, '\0');
      o = read_all(fd, payload.data(), payload.size(), deadline);
      if (o.result != IoResult::kOk) return o;
      onnx::TensorProto proto;
      if (!proto.ParseFromArray(payload.data(), static_cast<int>(bytes))) {
        return {IoResult::kError, "malformed frame: tensor '" + name + "' does not parse"};
      }
      auto t = tensor_from_proto(proto);
      if (!t) return {IoResult::kError, "tensor '" + name + "': " + t.status().to_string()};
      if (sink)
        (*sink)(name, std::move(*t));
      else
        frame->tensors[name] = std::move(*t);
    }
    if (left != 0) return {IoResult::kError, "malformed frame: payload longer than its tensors"};
    frame->values.clear();
    if (frame->header.contains("values")) {
      if (sink) return {IoResult::kError, "malformed frame: values in a streamed frame"};
      const std::string err =
          ValueDecoder(&frame->tensors).decode(frame->header.at("values"), &frame->values);
      if (!err.empty()) return {IoResult::kError, "malformed frame: " + err};
    }
  } catch (const nlohmann::json::exception& e) {
    return {IoResult::kError, std::string("malformed frame header: ") + e.what()};
  } catch (const std::bad_alloc&) {
    return {IoResult::kError, "malformed frame: a tensor cannot be allocated"};
  }
  return {};
}

nlohmann::json status_to_json(const Status& s) {
  return {{"code", static_cast<int>(s.code())}, {"message", s.message()}, {"context", s.context()}};
}

Status status_from_json(const nlohmann::json& j) {
  try {
    const int code = j.at("code").get<int>();
    if (code <= 0 || code > static_cast<int>(ErrorCode::kInternal)) {
      return internal_error("worker sent an error with unknown code " + std::to_string(code));
    }
    Status s(static_cast<ErrorCode>(code), j.at("message").get<std::string>());
    for (const auto& line : j.value("context", nlohmann::json::array())) {
      s.with_context(line.get<std::string>());
    }
    return s;
  } catch (const nlohmann::json::exception& e) {
    return internal_error(std::string("worker sent a malformed error: ") + e.what());
  }
}

nlohmann::json info_to_json(const SessionInfo& info) {
  nlohmann::json placement = nlohmann::json::array();
  for (const auto& p : info.node_placement) placement.push_back({p.node, p.op_type, p.provider});
  return {{"load_seconds", info.load_seconds},
          {"providers", info.providers},
          {"warnings", info.warnings},
          {"output_names", info.output_names},
          {"providers_requested", info.providers_requested},
          {"provider_node_counts", info.provider_node_counts},
          {"node_placement", std::move(placement)},
          {"provider_warnings", info.provider_warnings},
          {"transformers_applied", info.transformers_applied}};
}

SessionInfo info_from_json(const nlohmann::json& j) {
  SessionInfo info;
  info.load_seconds = j.value("load_seconds", 0.0);
  info.providers = j.value("providers", std::vector<std::string>{});
  info.warnings = j.value("warnings", std::vector<std::string>{});
  info.output_names = j.value("output_names", std::vector<std::string>{});
  info.providers_requested = j.value("providers_requested", std::vector<std::string>{});
  info.provider_node_counts = j.value("provider_node_counts", std::map<std::string, int64_t>{});
  info.provider_warnings = j.value("provider_warnings", std::vector<std::string>{});
  info.transformers_applied = j.value("transformers_applied", std::vector<std::string>{});
  for (const auto& p : j.value("node_placement", nlohmann::json::array())) {
    if (p.is_array() && p.size() == 3 && p[0].is_string() && p[1].is_string() && p[2].is_string())
      info.node_placement.push_back(
          {p[0].get<std::string>(), p[1].get<std::string>(), p[2].get<std::string>()});
  }
  return info;
}

}  // namespace onnxdbg::worker
