// The ONNX Runtime backend through ORT's C++ wrapper: session options from the spec, Tensor <->
// Ort::Value conversion, and ORT's own error text on failure. Runs only inside onnxdbg-worker.
#include "backends/onnxruntime/onnxruntime_backend.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <optional>
#include <regex>
#include <set>

#include "backends/onnxruntime/onnxruntime_optimizers.h"
#include "onnxruntime_cxx_api.h"
#include "onnxruntime_session_options_config_keys.h"

namespace onnxdbg {
namespace {

using Clock = std::chrono::steady_clock;
constexpr const char* kKnownOptions[] = {"opt",   "threads", "providers",        "optimized_model",
                                         "arena", "disable", "list_transformers"};
// Options `config.KEY=VALUE` become session config entries KEY=VALUE.
constexpr const char* kConfigPrefix = "config.";

std::string option(const BackendSpec& spec, const std::string& key, const std::string& def = "") {
  auto it = spec.options.find(key);
  return it == spec.options.end() ? def : it->second;
}

/// The process-wide ORT environment (ORT wants exactly one).
Ort::Env& ort_env() {
  static Ort::Env env(ORT_LOGGING_LEVEL_WARNING, "onnxdbg");
  return env;
}

// ONNX Runtime 1.29 numbers the newest element types two ways. Creating a tensor takes
// onnx.proto's numbers (24 FLOAT8E8M0, 25 UINT2, 26 INT2: given 25 for an int2 input it reports
// "tensor(UInt2x4)"), while the type of an output, or of a session's input or output, comes back
// in its C header's order (24 UINT2, 25 INT2, 26 FLOAT8E8M0: an int2 Cast output reads 25).
// ort_element_type is for the first, dtype_of_ort for the second; below 24 both agree.

// The element type to create an ORT tensor of `t` with, or UNDEFINED when ORT has none (complex,
// float6).
ONNXTensorElementDataType ort_element_type(DType t) {
  switch (t) {
    case DType::kComplex64:
    case DType::kComplex128:
    case DType::kFloat6E2M3:
    case DType::kFloat6E3M2:
    case DType::kUndefined:
      return ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
    default:
      return static_cast<int32_t>(t) <= kMaxDType ? static_cast<ONNXTensorElementDataType>(t)
                                                  : ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
  }
}

// The DType of an element type ORT reports (type info), kUndefined for one onnxdbg lacks.
DType dtype_of_ort(ONNXTensorElementDataType t) {
  switch (t) {
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT2:
      return DType::kUint2;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT2:
      return DType::kInt2;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT8E8M0:
      return DType::kFloat8E8M0;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_COMPLEX64:
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_COMPLEX128:
      return DType::kUndefined;
    default:
      return t > ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED && static_cast<int>(t) < 24
                 ? static_cast<DType>(t)
                 : DType::kUndefined;
  }
}

/// ORT's refusal of a model newer than it supports, said in one sentence: an opset ("Opset 28 is
/// under development ... Current official support for domain ai.onnx is till opset 26.") or an IR
/// version ("Unsupported model IR version: 15, max supported IR version: 13"); "" for any other
/// message.
std::string version_refusal(const std::string& what) {
  static const std::regex opset(
      R"(Opset (\d+) is under development[\s\S]*domain (\S+) is till opset (\d+))");
  static const std::regex ir(
      R"(Unsupported model IR version: (\d+), max supported IR version: (\d+))");
  std::smatch m;
  if (std::regex_search(what, m, opset))
    return fmt::format(
        "ONNX Runtime {} runs domain {} up to opset {} only, and this model imports opset {}",
        OrtGetApiBase()->GetVersionString(), m[2].str(), m[3].str(), m[1].str());
  if (std::regex_search(what, m, ir))
    return fmt::format(
        "ONNX Runtime {} reads models up to IR version {} only, and this model has IR version {}",
        OrtGetApiBase()->GetVersionString(), m[2].str(), m[1].str());
  return "";
}

Status ort_error(const Ort::Exception& e, bool running) {
  if (std::string refusal = version_refusal(e.what()); !refusal.empty())
    return unsupported(std::move(refusal));
  std::string msg = std::string("ONNX Runtime: ") + e.what();
  if (running && e.GetOrtErrorCode() == ORT_INVALID_ARGUMENT)
    return invalid_argument(std::move(msg));
  return backend_error(std::move(msg));
}

struct SessionConfig {
  GraphOptimizationLevel level = ORT_ENABLE_ALL;
  int threads = 0;
  std::vector<std::string> providers;  // full names, priority order, as requested
  std::vector<std::string> available;  // Ort::GetAvailableProviders()
  std::string optimized_model;
  bool arena = true;  // ORT's CPU memory arena
  /// Graph transformers and rewrite rules not to apply (disable=A+B).
  std::vector<std::string> disabled;
  /// Session config entries (config.KEY=VALUE), in the spec's order.
  std::vector<std::pair<std::string, std::string>> config_entries;
  /// Record which graph transformers changed the model (list_transformers=on).
  bool list_transformers = false;
  std::vector<std::string> warnings;
};

/// ONNX Runtime's log of one session, kept while the session lives (ORT calls its logging
/// function for as long): the names of the graph transformers that changed the model, from its
/// INFO lines "GraphTransformer <Name> modified: 1 with status: OK"; warnings and errors go on
/// to stderr as the default logger would print them.
class TransformerLog {
 public:
  static void ORT_API_CALL log(void* param, OrtLoggingLevel severity, const char* /*category*/,
                               const char* /*logid*/, const char* /*code_location*/,
                               const char* message) {
    auto* self = static_cast<TransformerLog*>(param);
    const std::string text = message ? message : "";
    if (severity >= ORT_LOGGING_LEVEL_WARNING) {
      std::fprintf(stderr, "onnxruntime: %s\n", text.c_str());
      return;
    }
    static const std::string kHead = "GraphTransformer ", kModified = " modified: 1";
    const size_t end = text.find(kModified);
    if (text.rfind(kHead, 0) != 0 || end == std::string::npos) return;
    std::string name = text.substr(kHead.size(), end - kHead.size());
    std::lock_guard<std::mutex> lock(self->mu_);
    if (std::find(self->names_.begin(), self->names_.end(), name) == self->names_.end())
      self->names_.push_back(std::move(name));
  }
  std::vector<std::string> names() const {
    std::lock_guard<std::mutex> lock(mu_);
    return names_;
  }

 private:
  mutable std::mutex mu_;
  std::vector<std::string> names_;
};

/// disable=, config.KEY= and list_transformers= of `spec` into `c`. Errors: kInvalidArgument for
/// a config. option without a key or list_transformers other than on/off.
Status parse_optimizer_options(const BackendSpec& spec, SessionConfig& c) {
  // '+' separates the names ('A,B' would start another backend in --backends); ORT's own entry
  // separates them with ';' and ignores names it does not know, so those are warned about here.
  if (const std::string part = option(spec, "disable"); !part.empty()) {
    size_t start = 0;
    while (start <= part.size()) {
      const size_t end = std::min(part.find_first_of("+;", start), part.size());
      std::string name = part.substr(start, end - start);
      if (!name.empty()) {
        if (!is_known_ort_optimizer(name)) {
          const auto similar = similar_ort_optimizers(name);
          c.warnings.push_back(fmt::format(
              "onnxruntime: disable names '{}', which is no graph transformer or rewrite rule of "
              "ONNX Runtime 1.29's CPU session, so ONNX Runtime ignores it{}",
              name,
              similar.empty() ? std::string("; the names are those of its log (Pad_Fusion, "
                                            "GeluFusionL2, onnxruntime:list_transformers=on)")
                              : fmt::format("; did you mean {}?", fmt::join(similar, " or "))));
        }
        c.disabled.push_back(std::move(name));
      }
      start = end + 1;
    }
  }
  for (const auto& [key, value] : spec.options)
    if (key.rfind(kConfigPrefix, 0) == 0) {
      const std::string entry = key.substr(std::strlen(kConfigPrefix));
      if (entry.empty())
        return invalid_argument(
            "onnxruntime: 'config.' needs a session config key after it "
            "(config.session.disable_quant_qdq=1)");
      c.config_entries.emplace_back(entry, value);
    }
  if (auto it = spec.options.find("list_transformers"); it != spec.options.end()) {
    if (it->second != "on" && it->second != "off")
      return invalid_argument(
          fmt::format("onnxruntime: list_transformers must be on or off, not '{}'", it->second));
    c.list_transformers = it->second == "on";
  }
  return Status::ok();
}

Expected<SessionConfig> parse_config(const BackendSpec& spec) {
  SessionConfig c;
  for (const auto& [key, value] : spec.options) {
    if (std::find(std::begin(kKnownOptions), std::end(kKnownOptions), key) ==
            std::end(kKnownOptions) &&
        key.rfind(kConfigPrefix, 0) != 0) {
      c.warnings.push_back(fmt::format("onnxruntime ignores the unknown option '{}'", key));
    }
  }
  if (auto it = spec.options.find("opt"); it != spec.options.end()) {
    const std::string& v = it->second;
    if (v == "disabled")
      c.level = ORT_DISABLE_ALL;
    else if (v == "basic")
      c.level = ORT_ENABLE_BASIC;
    else if (v == "extended")
      c.level = ORT_ENABLE_EXTENDED;
    else if (v == "all")
      c.level = ORT_ENABLE_ALL;
    else
      return invalid_argument(
          fmt::format("onnxruntime: opt must be disabled, basic, extended or all, not '{}'", v));
  }
  if (auto it = spec.options.find("threads"); it != spec.options.end()) {
    const std::string& v = it->second;
    char* end = nullptr;
    const long n = std::strtol(v.c_str(), &end, 10);
    if (v.empty() || *end != '\0' || n < 0 || n > 4096) {
      return invalid_argument(
          fmt::format("onnxruntime: threads must be a whole number of threads (0 = ONNX Runtime's "
                      "choice), not '{}'",
                      v));
    }
    c.threads = static_cast<int>(n);
  }
  c.optimized_model = option(spec, "optimized_model");
  ODB_RETURN_IF_ERROR(parse_optimizer_options(spec, c));
  if (auto it = spec.options.find("arena"); it != spec.options.end()) {
    if (it->second != "on" && it->second != "off")
      return invalid_argument(
          fmt::format("onnxruntime: arena must be on or off, not '{}'", it->second));
    c.arena = it->second == "on";
  }

  try {
    c.available = Ort::GetAvailableProviders();
  } catch (const Ort::Exception& e) {
    return ort_error(e, false);
  }
  ODB_ASSIGN_OR_RETURN(c.providers, parse_provider_list(option(spec, "providers", "cpu")));
  return c;
}

Expected<Ort::Value> to_ort(const Tensor& t, const std::string& name, const Ort::MemoryInfo& mem) {
  const ONNXTensorElementDataType type = ort_element_type(t.dtype());
  if (type == ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED) {
    return unsupported(
        fmt::format("onnxruntime: input '{}' has type {}, which onnxdbg cannot pass "
                    "to ONNX Runtime",
                    name, dtype_name(t.dtype())));
  }
  static const int64_t kScalarShape = 0;  // ORT wants a valid pointer even for rank 0
  const int64_t* shape = t.shape().empty() ? &kScalarShape : t.shape().data();
  Ort::AllocatorWithDefaultOptions alloc;
  if (t.dtype() == DType::kString) {
    Ort::Value v = Ort::Value::CreateTensor(alloc, shape, t.shape().size(), type);
    std::vector<const char*> ptrs;
    for (const auto& s : t.strings()) ptrs.push_back(s.c_str());
    if (!ptrs.empty()) v.FillStringTensor(ptrs.data(), ptrs.size());
    return v;
  }
  if (t.nbytes() == 0) return Ort::Value::CreateTensor(alloc, shape, t.shape().size(), type);
  if (dtype_bits(t.dtype()) < 8) {  // int4, uint4, float4e2m1, int2, uint2: ORT packs them
    Ort::Value v = Ort::Value::CreateTensor(alloc, shape, t.shape().size(), type);
    const size_t packed = *dtype_storage_bytes(t.dtype(), t.numel());
    if (v.GetTensorSizeInBytes() != packed)
      return internal_error(
          fmt::format("onnxruntime: input '{}' takes {} bytes in ORT, expected {}", name,
                      v.GetTensorSizeInBytes(), packed));
    pack_narrow(t.dtype(), reinterpret_cast<const uint8_t*>(t.raw()), t.numel(),
                static_cast<uint8_t*>(v.GetTensorMutableRawData()));
    return v;
  }
  // Zero copy: ORT reads inputs without writing them, and `t` outlives the Run call.
  return Ort::Value::CreateTensor(mem, const_cast<std::byte*>(t.raw()), t.nbytes(), shape,
                                  t.shape().size(), type);
}

Expected<Tensor> from_ort(const Ort::Value& v, const std::string& name) {
  if (!v.IsTensor()) {
    return unsupported(
        fmt::format("onnxruntime: output '{}' is not a tensor (a sequence, map or "
                    "optional); onnxdbg compares tensors only",
                    name));
  }
  const auto info = v.GetTensorTypeAndShapeInfo();
  const DType dtype = dtype_of_ort(info.GetElementType());
  if (dtype == DType::kUndefined) {
    return unsupported(
        fmt::format("onnxruntime: output '{}' has element type {} (ORT's enum), which "
                    "onnxdbg does not handle",
                    name, static_cast<int>(info.GetElementType())));
  }
  // Numeric outputs are copied over every byte below, so they skip the zero fill.
  ODB_ASSIGN_OR_RETURN(Tensor t, dtype == DType::kString
                                     ? Tensor::make(dtype, info.GetShape())
                                     : Tensor::make_uninitialized(dtype, info.GetShape()));
  if (t.dtype() == DType::kString) {
    for (int64_t i = 0; i < t.numel(); ++i) {
      t.strings()[static_cast<size_t>(i)] = v.GetStringTensorElement(static_cast<size_t>(i));
    }
  } else if (t.nbytes() > 0) {
    const size_t stored = *dtype_storage_bytes(dtype, t.numel());  // packed below 8 bits
    if (v.GetTensorSizeInBytes() != stored) {
      return internal_error(fmt::format("onnxruntime: output '{}' holds {} bytes, expected {}",
                                        name, v.GetTensorSizeInBytes(), stored));
    }
    unpack_narrow(dtype, static_cast<const uint8_t*>(v.GetTensorRawData()), t.numel(),
                  reinterpret_cast<uint8_t*>(t.raw()));
  }
  return t;
}

/// The element type of the tensors of a declared sequence type (seq(tensor(T)), or the value type
/// T of seq(map(K, T))), kUndefined when ORT does not say.
DType sequence_elem_type(const Ort::ConstTypeInfo& seq) {
  try {
    const Ort::TypeInfo elem = seq.GetSequenceTypeInfo().GetSequenceElementType();
    if (elem.GetONNXType() == ONNX_TYPE_TENSOR)
      return dtype_of_ort(elem.GetTensorTypeAndShapeInfo().GetElementType());
    if (elem.GetONNXType() == ONNX_TYPE_MAP) {
      const Ort::TypeInfo v = elem.GetMapTypeInfo().GetMapValueType();
      if (v.GetONNXType() == ONNX_TYPE_TENSOR)
        return dtype_of_ort(v.GetTensorTypeAndShapeInfo().GetElementType());
    }
  } catch (const Ort::Exception&) {
  }
  return DType::kUndefined;
}

/// What onnxdbg needs to know of a graph input's or output's declared type: the kind, and for a
/// sequence (also inside an optional) its element type, which an empty one cannot tell.
struct DeclaredType {
  ONNXType kind = ONNX_TYPE_UNKNOWN;
  ONNXType contained = ONNX_TYPE_UNKNOWN;  ///< an optional's content kind
  DType sequence_elem = DType::kUndefined;
};

DeclaredType declared_type(const Ort::TypeInfo& info) {
  DeclaredType d;
  d.kind = info.GetONNXType();
  if (d.kind == ONNX_TYPE_SEQUENCE) d.sequence_elem = sequence_elem_type(info.GetConst());
  if (d.kind == ONNX_TYPE_OPTIONAL) {
    const Ort::TypeInfo inner = info.GetOptionalTypeInfo().GetOptionalElementType();
    d.contained = inner.GetONNXType();
    if (d.contained == ONNX_TYPE_SEQUENCE) d.sequence_elem = sequence_elem_type(inner.GetConst());
  }
  return d;
}

/// An ONNX Runtime value for `v` (a tensor, a sequence of tensors, a map; an optional holding one
/// of those gives the value it holds, which is how ORT takes an optional-typed input); nullopt
/// for an optional holding nothing, which ORT takes as an omitted input. Tensors are not copied
/// (see to_ort). Errors: kUnsupported for an empty sequence (ORT's C API cannot make one) and a
/// sequence of maps.
Expected<std::optional<Ort::Value>> value_to_ort(const Value& v, const std::string& name,
                                                 const Ort::MemoryInfo& mem) {
  switch (v.kind()) {
    case Value::Kind::kTensor: {
      ODB_ASSIGN_OR_RETURN(Ort::Value t, to_ort(v.tensor(), name, mem));
      return std::optional<Ort::Value>(std::move(t));
    }
    case Value::Kind::kSequence: {
      const Sequence& s = v.sequence();
      if (s.holds_maps())
        return unsupported(fmt::format(
            "onnxruntime: input '{}' is a sequence of maps, which onnxdbg cannot pass to ONNX "
            "Runtime",
            name));
      if (s.tensors.empty())
        return unsupported(fmt::format(
            "onnxruntime: input '{}' is an empty sequence, which ONNX Runtime's API cannot create "
            "(OrtApi::CreateValue takes at least one element)",
            name));
      std::vector<Ort::Value> elems;
      for (size_t i = 0; i < s.tensors.size(); ++i) {
        ODB_ASSIGN_OR_RETURN(Ort::Value t,
                             to_ort(s.tensors[i], fmt::format("{}[{}]", name, i), mem));
        elems.push_back(std::move(t));
      }
      return std::optional<Ort::Value>(Ort::Value::CreateSequence(elems));
    }
    case Value::Kind::kMap: {
      ODB_ASSIGN_OR_RETURN(Ort::Value keys, to_ort(v.map().keys, name + " keys", mem));
      ODB_ASSIGN_OR_RETURN(Ort::Value values, to_ort(v.map().values, name + " values", mem));
      return std::optional<Ort::Value>(Ort::Value::CreateMap(keys, values));
    }
    case Value::Kind::kOptional:
      if (!v.has_element()) return std::optional<Ort::Value>();
      return value_to_ort(v.element(), name, mem);
  }
  return internal_error("unknown value kind");
}

/// The Map in ORT map `v` (two tensors: keys, values).
Expected<Map> map_from_ort(const Ort::Value& v, const std::string& name) {
  Ort::AllocatorWithDefaultOptions alloc;
  Map m;
  ODB_ASSIGN_OR_RETURN(m.keys, from_ort(v.GetValue(0, alloc), name + " keys"));
  ODB_ASSIGN_OR_RETURN(m.values, from_ort(v.GetValue(1, alloc), name + " values"));
  return m;
}

/// The onnxdbg value of ORT output `v`, declared as `declared`: a tensor, a sequence (of tensors
/// or maps), a map, or for an optional-typed output an optional (ORT returns the value it holds,
/// or a value without data, HasValue() false, for one holding nothing).
Expected<Value> value_from_ort(const Ort::Value& v, const std::string& name,
                               const DeclaredType& declared) {
  if (declared.kind == ONNX_TYPE_OPTIONAL) {
    if (!v.HasValue()) return Value::none();
    DeclaredType inner;
    inner.kind = declared.contained;
    inner.sequence_elem = declared.sequence_elem;
    ODB_ASSIGN_OR_RETURN(Value held, value_from_ort(v, name, inner));
    return Value::optional_of(std::move(held));
  }
  ONNXType kind = v.GetTypeInfo().GetONNXType();
  // ORT gives an optional's content its own type; should it say "optional", trust the model's.
  if (kind == ONNX_TYPE_OPTIONAL || kind == ONNX_TYPE_UNKNOWN) kind = declared.kind;
  if (kind == ONNX_TYPE_TENSOR) {
    ODB_ASSIGN_OR_RETURN(Tensor t, from_ort(v, name));
    return Value(std::move(t));
  }
  if (kind == ONNX_TYPE_MAP) {
    ODB_ASSIGN_OR_RETURN(Map m, map_from_ort(v, name));
    return Value(std::move(m));
  }
  if (kind != ONNX_TYPE_SEQUENCE)
    return unsupported(fmt::format(
        "onnxruntime: output '{}' has ONNX type {} (ONNXType enum), which onnxdbg does not handle",
        name, static_cast<int>(kind)));
  Ort::AllocatorWithDefaultOptions alloc;
  Sequence s;
  s.elem_type = declared.sequence_elem;
  const size_t n = v.GetCount();
  for (size_t i = 0; i < n; ++i) {
    const std::string elem_name = fmt::format("{}[{}]", name, i);
    Ort::Value e = v.GetValue(static_cast<int>(i), alloc);
    if (e.IsTensor()) {
      ODB_ASSIGN_OR_RETURN(Tensor t, from_ort(e, elem_name));
      if (s.elem_type == DType::kUndefined) s.elem_type = t.dtype();
      s.tensors.push_back(std::move(t));
    } else {
      ODB_ASSIGN_OR_RETURN(Map m, map_from_ort(e, elem_name));
      s.map_key_type = m.keys.dtype();
      if (s.elem_type == DType::kUndefined) s.elem_type = m.values.dtype();
      s.maps.push_back(std::move(m));
    }
  }
  return Value(std::move(s));
}

class OrtSession : public Session {
 public:
  /// `log`: the session's logger (list_transformers=on), kept as long as the session.
  OrtSession(Ort::Session session, SessionInfo info, std::unique_ptr<TransformerLog> log = {})
      : log_(std::move(log)), session_(std::move(session)), info_(std::move(info)) {
    Ort::AllocatorWithDefaultOptions alloc;
    for (size_t i = 0; i < session_.GetInputCount(); ++i) {
      input_names_.emplace_back(session_.GetInputNameAllocated(i, alloc).get());
    }
    for (size_t i = 0; i < session_.GetOutputCount(); ++i) {
      info_.output_names.emplace_back(session_.GetOutputNameAllocated(i, alloc).get());
    }
    for (size_t i = 0; i < session_.GetInputCount(); ++i)
      input_types_.push_back(declared_type(session_.GetInputTypeInfo(i)));
    for (size_t i = 0; i < session_.GetOutputCount(); ++i)
      output_types_.push_back(declared_type(session_.GetOutputTypeInfo(i)));
  }
  const SessionInfo& info() const override { return info_; }

  Expected<SessionRunResult> run(const TensorMap& inputs) override {
    return run_impl(inputs, nullptr);
  }

  /// As run(), each output copied out of ONNX Runtime and handed to `sink` in turn (ORT's copy
  /// freed first), so the caller can send it on before the next is copied.
  Expected<SessionRunResult> run_each(const TensorMap& inputs,
                                      const std::vector<std::string>& observe,
                                      const TensorSink& sink) override {
    if (!observe.empty()) return Session::run_each(inputs, observe, sink);  // unsupported
    return run_impl(inputs, &sink);
  }

  /// Sequence inputs go to ORT as sequences of tensors (Ort::Value::CreateSequence), optional
  /// ones as the value they hold or, holding nothing, not at all; outputs come back by their
  /// declared type (see value_from_ort).
  Expected<ValueRunResult> run_values(const ValueMap& inputs) override {
    ODB_RETURN_IF_ERROR(check_input_names(inputs, /*optional_may_be_missing=*/true));
    try {
      const Ort::MemoryInfo mem = Ort::MemoryInfo::CreateCpu(OrtArenaAllocator, OrtMemTypeDefault);
      std::vector<const char*> in_names;
      std::vector<Ort::Value> in_values;
      for (size_t i = 0; i < input_names_.size(); ++i) {
        const std::string& name = input_names_[i];
        auto it = inputs.find(name);
        if (it == inputs.end()) continue;  // an optional input left out: ORT takes it as None
        const Value& v = it->second;
        if (v.is_optional() && !v.has_element() && input_types_[i].kind != ONNX_TYPE_OPTIONAL)
          return invalid_argument(fmt::format(
              "onnxruntime: input '{}' is an empty optional, but the model's input is not optional",
              name));
        ODB_ASSIGN_OR_RETURN(std::optional<Ort::Value> ov, value_to_ort(v, name, mem));
        if (!ov) continue;  // an optional holding nothing: ORT takes it as omitted
        in_names.push_back(name.c_str());
        in_values.push_back(std::move(*ov));
      }
      ValueRunResult result;
      std::vector<Ort::Value> outs = run_session(in_names, in_values, result.run_seconds);
      for (size_t i = 0; i < outs.size(); ++i) {
        ODB_ASSIGN_OR_RETURN(Value v,
                             value_from_ort(outs[i], info_.output_names[i], output_types_[i]));
        outs[i] = Ort::Value(nullptr);
        result.outputs.emplace(info_.output_names[i], std::move(v));
      }
      return result;
    } catch (const Ort::Exception& e) {
      return ort_error(e, true);
    }
  }

 private:
  /// kInvalidArgument unless `inputs` (a TensorMap or ValueMap) names every input of the model
  /// (but those of optional type, with `optional_may_be_missing`) and nothing else.
  template <class M>
  Status check_input_names(const M& inputs, bool optional_may_be_missing = false) const {
    for (size_t i = 0; i < input_names_.size(); ++i) {
      const std::string& name = input_names_[i];
      if (optional_may_be_missing && input_types_[i].kind == ONNX_TYPE_OPTIONAL) continue;
      if (!inputs.count(name)) {
        return invalid_argument(fmt::format("onnxruntime: missing input '{}' (the model needs: {})",
                                            name, fmt::join(input_names_, ", ")));
      }
    }
    for (const auto& [name, t] : inputs) {
      if (std::find(input_names_.begin(), input_names_.end(), name) == input_names_.end()) {
        return invalid_argument(
            fmt::format("onnxruntime: '{}' is not an input of the model (it has: {})", name,
                        fmt::join(input_names_, ", ")));
      }
    }
    return Status::ok();
  }

  /// One Session::Run over every output of the model, its wall time (seconds) in `seconds`.
  /// Throws Ort::Exception as Run does.
  std::vector<Ort::Value> run_session(const std::vector<const char*>& in_names,
                                      const std::vector<Ort::Value>& in_values, double& seconds) {
    std::vector<const char*> out_names;
    for (const auto& name : info_.output_names) out_names.push_back(name.c_str());
    Ort::RunOptions run_options;
    const auto t0 = Clock::now();
    std::vector<Ort::Value> outs =
        session_.Run(run_options, in_names.data(), in_values.data(), in_values.size(),
                     out_names.data(), out_names.size());
    seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    return outs;
  }

  Expected<SessionRunResult> run_impl(const TensorMap& inputs, const TensorSink* sink) {
    ODB_RETURN_IF_ERROR(check_input_names(inputs));
    try {
      const Ort::MemoryInfo mem = Ort::MemoryInfo::CreateCpu(OrtArenaAllocator, OrtMemTypeDefault);
      std::vector<const char*> in_names;
      std::vector<Ort::Value> in_values;
      for (const auto& name : input_names_) {
        ODB_ASSIGN_OR_RETURN(Ort::Value v, to_ort(inputs.at(name), name, mem));
        in_names.push_back(name.c_str());
        in_values.push_back(std::move(v));
      }
      SessionRunResult result;
      std::vector<Ort::Value> outs = run_session(in_names, in_values, result.run_seconds);
      for (size_t i = 0; i < outs.size(); ++i) {
        ODB_ASSIGN_OR_RETURN(Tensor t, from_ort(outs[i], info_.output_names[i]));
        outs[i] = Ort::Value(nullptr);  // ORT's copy goes now: one copy at a time, not two
        if (sink)
          (*sink)(info_.output_names[i], std::move(t));
        else
          result.outputs[info_.output_names[i]] = std::move(t);
      }
      return result;
    } catch (const Ort::Exception& e) {
      return ort_error(e, true);
    }
  }

  std::unique_ptr<TransformerLog> log_;  // declared first: destroyed after the session
  Ort::Session session_;
  SessionInfo info_;
  std::vector<std::string> input_names_;
  std::vector<DeclaredType> input_types_;   ///< by input, in input_names_'s order
  std::vector<DeclaredType> output_types_;  ///< by output, in info_.output_names's order
};

/// Every node of the session's graph and the provider ORT assigned it; empty when ORT cannot
/// tell (the recording option is off, or an old library).
std::vector<NodePlacement> node_placement(const Ort::Session& session) {
  std::vector<NodePlacement> out;
  try {
    for (const auto& subgraph : session.GetEpGraphAssignmentInfo()) {
      const std::string ep = subgraph.GetEpName();
      for (const auto& node : subgraph.GetNodes()) {
        out.push_back({node.GetName(), node.GetOperatorType(), ep});
      }
    }
  } catch (const Ort::Exception&) {
    out.clear();
  }
  return out;
}

/// Adds provider `full` (available in this build) to `so`. The dedicated entry points take
/// default options; the rest go through the generic AppendExecutionProvider by ORT's short name.
void append_provider(Ort::SessionOptions& so, const std::string& full) {
  const std::string s = provider_short_name(full);
  if (s == "cuda") {
    Ort::CUDAProviderOptions cuda;
    so.AppendExecutionProvider_CUDA_V2(*cuda);
  } else if (s == "tensorrt") {
    Ort::TensorRTProviderOptions trt;
    so.AppendExecutionProvider_TensorRT_V2(*trt);
  } else if (s == "openvino") {
    so.AppendExecutionProvider_OpenVINO_V2({});
  } else if (s == "vitisai") {
    so.AppendExecutionProvider_VitisAI({});
  } else {
    static const std::map<std::string, std::string> kGeneric = {
        {"xnnpack", "XNNPACK"}, {"qnn", "QNN"},       {"snpe", "SNPE"},
        {"azure", "AZURE"},     {"webnn", "WebNN"},   {"webgpu", "WebGPU"},
        {"js", "JS"},           {"coreml", "CoreML"}, {"dml", "DML"}};
    auto it = kGeneric.find(s);
    so.AppendExecutionProvider(it != kGeneric.end() ? it->second
                                                    : full.substr(0, full.size() - 17));
  }
}

class OrtBackend : public Backend {
 public:
  OrtBackend(BackendSpec spec, SessionConfig config)
      : spec_(std::move(spec)), config_(std::move(config)) {}
  std::string name() const override { return "onnxruntime"; }
  const BackendSpec& spec() const override { return spec_; }

  std::string describe() const override {
    std::vector<std::string> extra;
    for (const auto& p : config_.available) {
      if (p != "CPUExecutionProvider") extra.push_back(provider_short_name(p));
    }
    extra.insert(extra.begin(), "CPU");
    return fmt::format("ONNX Runtime {} ({})", OrtGetApiBase()->GetVersionString(),
                       fmt::join(extra, ", "));
  }

  Expected<std::unique_ptr<Session>> do_load(
      const std::filesystem::path& model_path,
      const std::filesystem::path& external_data_dir) override {
    try {
      Ort::SessionOptions so;
      // A model written into a temp folder reads its weights from the original's folder; ORT
      // refuses data paths (links included) that resolve outside the folder it reads from.
      if (!external_data_dir.empty())
        so.AddConfigEntry(kOrtSessionOptionsModelExternalInitializersFileFolderPath,
                          external_data_dir.c_str());
      so.SetGraphOptimizationLevel(config_.level);
      if (config_.threads > 0) so.SetIntraOpNumThreads(config_.threads);
      if (!config_.optimized_model.empty())
        so.SetOptimizedModelFilePath(config_.optimized_model.c_str());
      // Without its arena ORT allocates each tensor with malloc: memory freed by one session is
      // reused by the next in the same worker, where the arena's regions (mmap'd, hundreds of
      // megabytes for a layerwise batch) would be returned and faulted in afresh every time.
      if (!config_.arena) so.DisableCpuMemArena();
      so.AddConfigEntry(kOrtSessionOptionsRecordEpGraphAssignmentInfo, "1");
      if (!config_.disabled.empty())
        so.AddConfigEntry(kOrtSessionOptionsDisableSpecifiedOptimizers,
                          fmt::format("{}", fmt::join(config_.disabled, ";")).c_str());
      for (const auto& [key, value] : config_.config_entries)
        so.AddConfigEntry(key.c_str(), value.c_str());
      std::unique_ptr<TransformerLog> log;
      if (config_.list_transformers) {
        log = std::make_unique<TransformerLog>();
        Ort::ThrowOnError(
            Ort::GetApi().SetUserLoggingFunction(so, &TransformerLog::log, log.get()));
        so.SetLogSeverityLevel(ORT_LOGGING_LEVEL_INFO);
      }
      // A provider this build lacks or refuses is skipped, not fatal: the session then runs on
      // what is left (CPU last), which is exactly what users must be told about.
      std::map<std::string, std::string> refused;
      for (const auto& p : config_.providers) {
        if (p == "CPUExecutionProvider") continue;  // always present, always last
        if (std::find(config_.available.begin(), config_.available.end(), p) ==
            config_.available.end())
          continue;
        try {
          append_provider(so, p);
        } catch (const Ort::Exception& e) {
          refused[p] = e.what();
        }
      }
      const auto t0 = Clock::now();
      Ort::Session session(ort_env(), model_path.c_str(), so);
      SessionInfo info;
      info.load_seconds = std::chrono::duration<double>(Clock::now() - t0).count();
      info.node_placement = node_placement(session);
      if (log) info.transformers_applied = log->names();
      ProviderReport pr =
          check_providers(config_.providers, config_.available, refused, info.node_placement);
      info.providers_requested = config_.providers;
      info.provider_node_counts = pr.node_counts;
      info.provider_warnings = pr.warnings;
      info.providers = pr.used;
      if (info.providers.empty()) {
        // ORT did not say (e.g. a graph without nodes): what was added, CPU last.
        for (const auto& p : config_.providers)
          if (p != "CPUExecutionProvider" && !refused.count(p) &&
              std::find(config_.available.begin(), config_.available.end(), p) !=
                  config_.available.end())
            info.providers.push_back(p);
        info.providers.emplace_back("CPUExecutionProvider");
      }
      info.warnings = config_.warnings;
      info.warnings.insert(info.warnings.end(), pr.warnings.begin(), pr.warnings.end());
      return std::unique_ptr<Session>(
          new OrtSession(std::move(session), std::move(info), std::move(log)));
    } catch (const Ort::Exception& e) {
      return ort_error(e, false);
    }
  }

 private:
  BackendSpec spec_;
  SessionConfig config_;
};

}  // namespace

Expected<std::unique_ptr<Backend>> make_onnxruntime_backend(const BackendSpec& spec) {
  ODB_ASSIGN_OR_RETURN(SessionConfig config, parse_config(spec));
  return std::unique_ptr<Backend>(new OrtBackend(spec, std::move(config)));
}

}  // namespace onnxdbg
