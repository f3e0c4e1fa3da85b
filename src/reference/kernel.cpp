// KernelContext attribute access and the kernel registry (ONNX's since-version rule, bounded by
// each kernel's through-version).
#include "reference/kernel.h"

#include <cblas.h>

#include <algorithm>

#include "model/model.h"
#include "reference/op_versions.h"

namespace onnxdbg::reference {

Expected<const Tensor*> KernelContext::required_input(size_t i) const {
  const Tensor* t = input(i);
  if (t) return t;
  if (const Value* v = input_value(i))
    return model_error(node_.op_type() + " of node '" + node_.name() +
                       "' expects a tensor as input " + std::to_string(i) + ", got " +
                       v->kind_name());
  return model_error(describe() + " is missing its required input " + std::to_string(i));
}

const onnx::AttributeProto* KernelContext::find_attr(const std::string& name) const {
  for (const auto& a : node_.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

int64_t KernelContext::attr_int(const std::string& name, int64_t def) const {
  const auto* a = find_attr(name);
  return a ? a->i() : def;
}

float KernelContext::attr_float(const std::string& name, float def) const {
  const auto* a = find_attr(name);
  return a ? a->f() : def;
}

std::string KernelContext::attr_string(const std::string& name, const std::string& def) const {
  const auto* a = find_attr(name);
  return a ? a->s() : def;
}

std::vector<int64_t> KernelContext::attr_ints(const std::string& name,
                                              std::vector<int64_t> def) const {
  const auto* a = find_attr(name);
  return a ? std::vector<int64_t>(a->ints().begin(), a->ints().end()) : std::move(def);
}

std::vector<float> KernelContext::attr_floats(const std::string& name,
                                              std::vector<float> def) const {
  const auto* a = find_attr(name);
  return a ? std::vector<float>(a->floats().begin(), a->floats().end()) : std::move(def);
}

std::vector<std::string> KernelContext::attr_strings(const std::string& name) const {
  const auto* a = find_attr(name);
  return a ? std::vector<std::string>(a->strings().begin(), a->strings().end())
           : std::vector<std::string>{};
}

Expected<Tensor> KernelContext::attr_tensor(const std::string& name) const {
  const auto* a = find_attr(name);
  if (!a || !a->has_t()) return not_found(describe() + " has no tensor attribute '" + name + "'");
  return tensor_from_proto(a->t());
}

const onnx::GraphProto* KernelContext::attr_graph(const std::string& name) const {
  const auto* a = find_attr(name);
  return a && a->has_g() ? &a->g() : nullptr;
}

std::string KernelContext::describe() const {
  return "node '" + node_.name() + "' (" + node_.op_type() + ")";
}

namespace {
uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}
}  // namespace

uint32_t KernelContext::random_seed() const {
  // FNV-1a of the node's identity: its name, or its position when it has none.
  const std::string id = node_.name().empty() ? "#" + std::to_string(node_index_) : node_.name();
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : id) h = (h ^ c) * 0x100000001b3ULL;
  uint64_t run_seed = 0, draw = 0;
  if (random_source_) {
    run_seed = random_source_->run_seed;
    draw = random_source_->draws[&node_]++;
  }
  return static_cast<uint32_t>(splitmix64(splitmix64(splitmix64(run_seed) ^ h) ^ draw));
}

KernelDef& KernelRegistry::add(const std::string& op_type, int since_version, KernelFn fn,
                               HalfMode half_mode, const std::string& domain) {
  auto& v = kernels_[{domain, op_type}];
  v.push_back(KernelDef{domain, op_type, since_version, fn, half_mode});
  std::sort(v.begin(), v.end(), [](const KernelDef& a, const KernelDef& b) {
    return a.since_version < b.since_version;
  });
  for (auto& k : v)
    if (k.since_version == since_version) return k;
  return v.back();
}

const std::vector<KernelDef>& KernelRegistry::kernels(const std::string& domain,
                                                      const std::string& op_type) const {
  static const std::vector<KernelDef> kNone;
  auto it = kernels_.find({canonical_domain(domain), op_type});
  return it == kernels_.end() ? kNone : it->second;
}

int KernelRegistry::through(const KernelDef& k) const {
  int next_since = 0;  // the since-version of the op's next kernel; 0 when k is the newest
  for (const auto& other : kernels(k.domain, k.op_type))
    if (other.since_version > k.since_version) {
      next_since = other.since_version;
      break;
    }
  // Undeclared: the versions the ONNX 1.12 suite validated, or the kernel's own version alone.
  const int bound = k.through_version > 0 ? k.through_version
                                          : std::max(validated_opset(k.domain), k.since_version);
  int through = k.since_version;
  for (int v : schema_versions(k.domain, k.op_type))
    if (v >= k.since_version && v <= bound && (next_since == 0 || v < next_since)) through = v;
  return through;
}

const KernelDef* KernelRegistry::find(const std::string& domain, const std::string& op_type,
                                      int64_t opset) const {
  const std::vector<KernelDef>& list = kernels(domain, op_type);
  if (list.empty()) return nullptr;
  const int in_force = version_in_force(domain, op_type, opset);
  // Ops ONNX does not define have no versions to check against: the newest kernel not above the
  // opset, as in ONNX's rule.
  const int64_t limit = in_force == kNoSchema ? opset : in_force;
  const KernelDef* best = nullptr;
  for (const auto& k : list)
    if (k.since_version <= limit) best = &k;
  if (!best || in_force == kNoSchema) return best;
  return in_force <= through(*best) ? best : nullptr;
}

std::vector<std::string> KernelRegistry::op_types(const std::string& domain) const {
  std::vector<std::string> out;
  for (const auto& [key, v] : kernels_)
    if (key.first == domain) out.push_back(key.second);
  return out;
}

#define ODB_OP(name) void register_##name(KernelRegistry&);
#include "reference/ops/ops.def"
#undef ODB_OP

const KernelRegistry& KernelRegistry::global() {
  static const KernelRegistry registry = [] {
    // GEMMs run on the calling thread: OpenBLAS's own pool would compete with the interpreter's
    // threads for cores, and the reference must not depend on how a library splits its work.
    // (The pthread build, linked for its locks, still starts that pool when it loads.)
    openblas_set_num_threads(1);
    KernelRegistry r;
#define ODB_OP(name) register_##name(r);
#include "reference/ops/ops.def"
#undef ODB_OP
    return r;
  }();
  return registry;
}

}  // namespace onnxdbg::reference
