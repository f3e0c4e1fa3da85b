// Shape inference wrapper: placeholders against ONNX 1.12's data-propagation crash, a light copy
// of the model, and the refreshed value_info written back.
#include "model/shape_inference.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <unordered_set>
#include <vector>

#include "core/atomic_file.h"
#include "core/numel.h"
#include "core/onnx.h"
#include "onnx/defs/schema.h"
#include "onnx/shape_inference/implementation.h"

namespace onnxdbg {

namespace {

// The child's reply: [u32 error length][error][model bytes to the end].
[[noreturn]] void infer_in_child(int fd, onnx::ModelProto& model, bool strict) {
  std::string error;
  try {
    // check_type off, as in onnx.checker.check_model(full_check=True): ONNX's own test models
    // break the type constraints of old Constant versions.
    onnx::ShapeInferenceOptions options(/*check_type=*/false, /*strict_mode=*/strict ? 1 : 0,
                                        /*data_prop=*/true);
    onnx::shape_inference::InferShapes(model, onnx::OpSchemaRegistry::Instance(), options);
  } catch (const std::exception& e) {
    error = e.what();
  }
  std::string bytes;
  const bool ok = model.SerializeToString(&bytes);
  const auto len = static_cast<uint32_t>(error.size());
  const bool sent = write_all_fd(fd, {reinterpret_cast<const char*>(&len), sizeof len}) == 0 &&
                    write_all_fd(fd, error) == 0 && (!ok || write_all_fd(fd, bytes) == 0);
  _exit(sent && ok ? 0 : 3);
}

// CPU time (user + system, in clock ticks) the process `pid` has used; -1 when unreadable.
long long cpu_ticks(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(in, line)) return -1;
  // Fields after the command name (which may hold spaces) start after the last ')'.
  const size_t close = line.rfind(')');
  if (close == std::string::npos) return -1;
  std::istringstream rest(line.substr(close + 2));
  std::string field;
  long long utime = -1, stime = -1;
  for (int i = 3; rest >> field; ++i) {  // field 3 is the state; 14 utime, 15 stime
    if (i == 14) utime = std::atoll(field.c_str());
    if (i == 15) {
      stime = std::atoll(field.c_str());
      break;
    }
  }
  return utime < 0 || stime < 0 ? -1 : utime + stime;
}

enum class ChildEnd { kReplied, kStuck };

// Forks a child that runs InferShapes on `model` and reads its reply into `reply`, and its wait
// status into `status`. A child forked from a multi-threaded process can block forever on a lock
// another thread held at the fork (seen with clang 14's ASan allocator): one that uses no CPU
// for 3 s without replying is killed and reported as kStuck.
// `stall`: the test hook ONNXDBG_DEBUG_SHAPE_INFERENCE_STALL (tests/unit/model): the child
// blocks forever, as one that met a lock at the fork does.
ChildEnd infer_in_forked_child(onnx::ModelProto& model, bool strict, bool stall, std::string& reply,
                               int& status, std::string& start_error) {
  int fds[2];
  // Close-on-exec: a worker another thread spawns meanwhile must not hold the write end open
  // (the read below would never see the end).
  if (pipe2(fds, O_CLOEXEC) != 0) {
    start_error = std::string("shape inference could not start: ") + strerror(errno);
    return ChildEnd::kReplied;
  }
  const pid_t pid = fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    start_error = std::string("shape inference could not start: ") + strerror(errno);
    return ChildEnd::kReplied;
  }
  if (pid == 0) {
    ::close(fds[0]);
    // A crash here is the result reported below: the child dies of its signal, without the
    // handlers a sanitizer or libFuzzer installed in the parent (which would report it as theirs).
    for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) ::signal(sig, SIG_DFL);
    if (stall)
      for (;;) ::pause();
    infer_in_child(fds[1], model, strict);
  }
  ::close(fds[1]);
  char buf[65536];
  long long last_ticks = -1;
  int idle_seconds = 0;
  bool stuck = false;
  for (;;) {
    pollfd p{fds[0], POLLIN, 0};
    const int ready = ::poll(&p, 1, 1000);
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) {  // a second without a byte: is the child still computing?
      const long long ticks = cpu_ticks(pid);
      idle_seconds = ticks >= 0 && ticks == last_ticks ? idle_seconds + 1 : 0;
      last_ticks = ticks;
      if (idle_seconds >= 3) {
        stuck = true;
        ::kill(pid, SIGKILL);
        break;
      }
      continue;
    }
    const ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    reply.append(buf, static_cast<size_t>(n));
    idle_seconds = 0;
  }
  ::close(fds[0]);
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return stuck ? ChildEnd::kStuck : ChildEnd::kReplied;
}

}  // namespace

std::string run_onnx_shape_inference(onnx::ModelProto& model, bool strict) {
  // Build the schema registry here, once, so that each child finds it made (its first use
  // registers every op's schema: tens of milliseconds a child would spend again each time).
  static const bool registry_ready = onnx::OpSchemaRegistry::Schema("Relu", 14, "") != nullptr;
  (void)registry_ready;
  const char* stall = std::getenv("ONNXDBG_DEBUG_SHAPE_INFERENCE_STALL");  // "first" or "all"
  const std::string stall_mode = stall ? stall : "";
  std::string reply, start_error;
  int status = 0;
  ChildEnd end =
      infer_in_forked_child(model, strict, !stall_mode.empty(), reply, status, start_error);
  if (end == ChildEnd::kStuck) {  // a lock held at the fork: a second child rarely meets it again
    reply.clear();
    end = infer_in_forked_child(model, strict, stall_mode == "all", reply, status, start_error);
  }
  if (!start_error.empty()) return start_error;
  if (end == ChildEnd::kStuck)
    return "ONNX shape inference stopped making progress on this model (its process was killed); "
           "no types were inferred";
  if (WIFSIGNALED(status))
    return "ONNX shape inference crashed with signal " + std::to_string(WTERMSIG(status)) + " (" +
           strsignal(WTERMSIG(status)) + ") on this model; no types were inferred";
  uint32_t len = 0;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || reply.size() < sizeof len)
    return "ONNX shape inference failed to report back on this model; no types were inferred";
  std::memcpy(&len, reply.data(), sizeof len);
  if (reply.size() < sizeof len + len)
    return "ONNX shape inference failed to report back on this model; no types were inferred";
  std::string error = reply.substr(sizeof len, len);
  onnx::ModelProto inferred;
  if (!inferred.ParseFromArray(reply.data() + sizeof len + len,
                               static_cast<int>(reply.size() - sizeof len - len)))
    return "ONNX shape inference returned a model that cannot be read; no types were inferred";
  model = std::move(inferred);
  return error;
}

void add_inference_placeholders(onnx::GraphProto& g,
                                const std::function<bool(const std::string&)>& defined_outside) {
  std::unordered_set<std::string> placed;
  for (const auto& vi : g.output()) placed.insert(vi.name());
  for (const auto& vi : g.input()) placed.insert(vi.name());
  for (const auto& vi : g.value_info()) placed.insert(vi.name());
  for (const auto& t : g.initializer()) placed.insert(t.name());
  std::unordered_set<std::string> produced;
  for (const auto& n : g.node())
    for (const auto& o : n.output()) produced.insert(o);
  auto placeholder = [&](const std::string& name) {
    if (!name.empty() && placed.insert(name).second) {
      auto* vi = g.add_value_info();
      vi->set_name(name);
      vi->mutable_type();
    }
  };
  for (int i = 0; i < g.node_size(); ++i) {
    const auto& n = g.node(i);
    for (const auto& o : n.output()) placeholder(o);
    for (const auto& in : n.input())
      if (!in.empty() && !produced.count(in) && !(defined_outside && defined_outside(in)))
        placeholder(in);  // never shadow an outer value
  }
}

namespace {

// Placeholders in `g` and its subgraphs; `outer` lists the names visible from enclosing graphs.
void prepare(onnx::GraphProto& g, std::vector<const std::unordered_set<std::string>*>& outer) {
  auto visible = [&](const std::string& n) {
    for (const auto* s : outer)
      if (s->count(n)) return true;
    return false;
  };
  add_inference_placeholders(g, visible);
  std::unordered_set<std::string> mine;
  for (const auto& vi : g.input()) mine.insert(vi.name());
  for (const auto& t : g.initializer()) mine.insert(t.name());
  for (const auto& n : g.node())
    for (const auto& o : n.output()) mine.insert(o);
  outer.push_back(&mine);
  for (auto& n : *g.mutable_node())
    for (auto& a : *n.mutable_attribute()) {
      if (a.has_g()) prepare(*a.mutable_g(), outer);
      for (auto& sg : *a.mutable_graphs()) prepare(sg, outer);
    }
  outer.pop_back();
}

// Inferred value types of every subgraph below `g` into `out`; names typed differently in two
// places go to `conflicts`.
void collect_subgraph_types(const onnx::GraphProto& g,
                            std::unordered_map<std::string, onnx::TypeProto>& out,
                            std::unordered_set<std::string>& conflicts) {
  auto add = [&](const onnx::ValueInfoProto& vi) {
    if (vi.type().value_case() == onnx::TypeProto::VALUE_NOT_SET) return;
    auto [it, fresh] = out.emplace(vi.name(), vi.type());
    if (!fresh && it->second.SerializeAsString() != vi.type().SerializeAsString())
      conflicts.insert(vi.name());
  };
  for (const auto& n : g.node())
    for (const auto& a : n.attribute()) {
      std::vector<const onnx::GraphProto*> subs;
      if (a.has_g()) subs.push_back(&a.g());
      for (const auto& sg : a.graphs()) subs.push_back(&sg);
      for (const auto* sg : subs) {
        for (const auto& vi : sg->value_info()) add(vi);
        for (const auto& vi : sg->output()) add(vi);
        collect_subgraph_types(*sg, out, conflicts);
      }
    }
}

}  // namespace

bool is_float_type(int32_t t) {
  using T = onnx::TensorProto;
  return t == T::FLOAT || t == T::DOUBLE || t == T::FLOAT16 || t == T::BFLOAT16;
}

void copy_initializer(const onnx::TensorProto& src, onnx::TensorProto* dst) {
  const int64_t numel = saturating_numel(src.dims());
  if (!is_float_type(src.data_type()) || numel <= kInferenceMaxCopiedFloats) {
    *dst = src;
    return;
  }
  dst->set_name(src.name());
  dst->set_data_type(src.data_type());
  *dst->mutable_dims() = src.dims();
}

InferredTypes infer_shapes(const onnx::ModelProto& src, bool strict, bool reinfer_outputs) {
  InferredTypes out;
  onnx::ModelProto copy;
  copy.set_ir_version(src.ir_version());
  *copy.mutable_opset_import() = src.opset_import();
  *copy.mutable_functions() = src.functions();
  auto* g = copy.mutable_graph();
  const auto& sg = src.graph();
  g->set_name(sg.name());
  *g->mutable_input() = sg.input();
  *g->mutable_output() = sg.output();
  if (reinfer_outputs)
    for (auto& o : *g->mutable_output()) {
      // Keep the element type (inference may not know it for every op) but drop the dims.
      if (o.type().has_tensor_type()) {
        o.mutable_type()->mutable_tensor_type()->clear_shape();
      }
    }
  *g->mutable_node() = sg.node();
  *g->mutable_sparse_initializer() = sg.sparse_initializer();
  for (const auto& t : sg.initializer()) copy_initializer(t, g->add_initializer());
  std::vector<const std::unordered_set<std::string>*> outer;
  prepare(*g, outer);
  out.error = run_onnx_shape_inference(copy, strict);
  for (const auto& vi : copy.graph().value_info())
    if (vi.type().value_case() != onnx::TypeProto::VALUE_NOT_SET) out.types[vi.name()] = vi.type();
  for (const auto& vi : copy.graph().output())
    if (vi.type().value_case() != onnx::TypeProto::VALUE_NOT_SET) out.types[vi.name()] = vi.type();
  std::unordered_set<std::string> conflicts;
  collect_subgraph_types(copy.graph(), out.subgraph_types, conflicts);
  for (const auto& name : conflicts) out.subgraph_types.erase(name);
  return out;
}

std::string refresh_value_info(onnx::ModelProto& model, bool update_outputs) {
  InferredTypes inf = infer_shapes(model, /*strict=*/false, /*reinfer_outputs=*/update_outputs);
  auto* g = model.mutable_graph();
  std::unordered_set<std::string> skip;
  for (const auto& vi : g->input()) skip.insert(vi.name());
  for (const auto& vi : g->output()) skip.insert(vi.name());
  for (const auto& t : g->initializer()) skip.insert(t.name());
  g->clear_value_info();
  // Node order keeps the file readable and deterministic (the map is unordered).
  for (const auto& n : g->node())
    for (const auto& o : n.output()) {
      if (o.empty() || skip.count(o)) continue;
      auto it = inf.types.find(o);
      if (it == inf.types.end()) continue;
      const auto& t = it->second;
      if (t.has_tensor_type() && t.tensor_type().elem_type() == 0) continue;
      auto* vi = g->add_value_info();
      vi->set_name(o);
      *vi->mutable_type() = t;
      skip.insert(o);
    }
  if (update_outputs)
    for (auto& o : *g->mutable_output()) {
      auto it = inf.types.find(o.name());
      if (it == inf.types.end()) continue;
      const auto& t = it->second;
      if (!t.has_tensor_type() || t.tensor_type().elem_type() == 0 || !t.tensor_type().has_shape())
        continue;  // keep the declared type rather than lose its dims
      *o.mutable_type() = t;
    }
  return inf.error;
}

}  // namespace onnxdbg
