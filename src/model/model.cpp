// Model file I/O and TensorProto <-> Tensor conversion, including external data.
#include "model/model.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>

#include <algorithm>
#include <cassert>
#include <charconv>
#include <fstream>
#include <limits>
#include <set>

#include "core/atomic_file.h"
#include "core/onnx.h"
#include "model/external_data.h"
#include "model/graph.h"
#include "onnx/defs/schema.h"

namespace onnxdbg {

namespace fs = std::filesystem;

std::string canonical_domain(const std::string& domain) {
  return domain == "ai.onnx" ? std::string() : domain;
}

int64_t max_known_ir_version() { return onnx::Version::IR_VERSION; }

int64_t max_known_opset(const std::string& domain) {
  const auto& map = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  auto it = map.find(canonical_domain(domain));
  return it == map.end() ? 0 : it->second.second;
}

int64_t model_opset(const onnx::ModelProto& model, const std::string& domain) {
  const bool want_default = domain.empty() || domain == "ai.onnx";
  for (const auto& op : model.opset_import()) {
    const bool is_default = op.domain().empty() || op.domain() == "ai.onnx";
    if ((want_default && is_default) || (!want_default && op.domain() == domain))
      return op.version();
  }
  return 0;
}

namespace {

void add_version_warnings(LoadedModel& m) {
  const std::string name = m.path.empty() ? std::string("model") : m.path.filename().string();
  if (m.proto.ir_version() > max_known_ir_version())
    m.warnings.push_back(name + " has IR version " + std::to_string(m.proto.ir_version()) +
                         ", newer than the " + std::to_string(max_known_ir_version()) +
                         " this build of ONNX knows; carrying on");
  for (const auto& op : m.proto.opset_import()) {
    const int64_t known = max_known_opset(op.domain());
    if (known > 0 && op.version() > known)
      m.warnings.push_back(name + " imports opset " + std::to_string(op.version()) +
                           " of domain '" + (op.domain().empty() ? "ai.onnx" : op.domain()) +
                           "', newer than the " + std::to_string(known) +
                           " this build of ONNX knows; newer ops use the newest known schema");
  }
}

}  // namespace

namespace {

// Protobuf refuses messages nested deeper than 100 levels. Model > Graph, then Node > Attribute >
// Graph per level of subgraph, so about 32 levels of If/Loop/Scan load.
constexpr int kMaxSubgraphDepth = (100 - 2) / 3;

int graph_depth(const onnx::GraphProto& g) {
  int deepest = 0;
  for (const auto& n : g.node())
    for (const auto& a : n.attribute()) {
      if (a.has_g()) deepest = std::max(deepest, 1 + graph_depth(a.g()));
      for (const auto& sg : a.graphs()) deepest = std::max(deepest, 1 + graph_depth(sg));
    }
  return deepest;
}

// When `bytes` failed to parse only because of protobuf's nesting limit, how deep its subgraphs
// nest; 0 when it fails with a larger limit too (truncated or corrupted). The larger limit stays
// small enough for the recursive parse and walk to fit the stack.
int subgraph_depth_beyond_limit(const std::string& bytes) {
  google::protobuf::io::ArrayInputStream raw(bytes.data(), static_cast<int>(bytes.size()));
  google::protobuf::io::CodedInputStream coded(&raw);
  coded.SetTotalBytesLimit(std::numeric_limits<int>::max());
  coded.SetRecursionLimit(1000);
  onnx::ModelProto deep;
  if (!deep.ParseFromCodedStream(&coded) || !coded.ConsumedEntireMessage()) return 0;
  return graph_depth(deep.graph());
}

}  // namespace

Expected<LoadedModel> parse_model(const std::string& bytes, const fs::path& base_dir,
                                  const std::string& what) {
  LoadedModel m;
  m.base_dir = base_dir;
  if (bytes.empty()) return model_error(what + " is empty, not an ONNX model");
  google::protobuf::io::ArrayInputStream raw(bytes.data(), static_cast<int>(bytes.size()));
  google::protobuf::io::CodedInputStream coded(&raw);
  coded.SetTotalBytesLimit(std::numeric_limits<int>::max());
  if (!m.proto.ParseFromCodedStream(&coded) || !coded.ConsumedEntireMessage()) {
    if (const int depth = subgraph_depth_beyond_limit(bytes); depth > 0)
      return model_error(what + " nests subgraphs (If/Loop/Scan bodies) " + std::to_string(depth) +
                         " deep, deeper than the " + std::to_string(kMaxSubgraphDepth) +
                         " that protobuf's limit of 100 nested messages allows; flatten the "
                         "control flow");
    return model_error(what +
                       " is not a valid ONNX model (protobuf parse failed: truncated, "
                       "corrupted, or not a .onnx file)");
  }
  if (!m.proto.has_graph() || m.proto.ir_version() == 0)
    return model_error(what +
                       " parsed as protobuf but is not an ONNX model (no graph or no IR "
                       "version)");
  add_version_warnings(m);
  return m;
}

Expected<LoadedModel> load_model(const fs::path& path, const fs::path& external_data_dir) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return not_found("model file '" + path.string() + "' does not exist");
  if (fs::is_directory(path, ec))
    return invalid_argument("'" + path.string() + "' is a directory, not an ONNX model file");
  const auto size = fs::file_size(path, ec);
  if (ec) return not_found("cannot read model file '" + path.string() + "': " + ec.message());
  if (size >= static_cast<uintmax_t>(std::numeric_limits<int>::max()))
    return model_error("'" + path.string() + "' is " + std::to_string(size >> 20) +
                       " MiB: a single protobuf file cannot exceed 2 GiB; save the model with "
                       "external data (weights in a separate file) instead");
  std::ifstream in(path, std::ios::binary);
  if (!in) return not_found("cannot open model file '" + path.string() + "'");
  std::string bytes(size, '\0');
  in.read(bytes.data(), static_cast<std::streamsize>(size));
  if (!in) return not_found("cannot read model file '" + path.string() + "'");
  fs::path base = external_data_dir.empty() ? path.parent_path() : external_data_dir;
  if (base.empty()) base = ".";
  auto m = parse_model(bytes, base, "'" + path.string() + "'");
  if (!m) return m;
  m->path = path;
  m->warnings.clear();
  add_version_warnings(*m);
  if (Status st = check_external_data(m->proto.graph(), base); !st)
    return std::move(st).with_context("while loading '" + path.string() + "'");
  return m;
}

Status reject_sparse_initializers(const onnx::ModelProto& model, const std::string& who) {
  std::string found;
  walk_graphs(model.graph(), [&](const GraphVisit& v) {
    if (found.empty() && v.graph->sparse_initializer_size() > 0)
      found = "'" + v.graph->sparse_initializer(0).values().name() + "' of graph " + v.path;
  });
  if (found.empty()) return Status::ok();
  return unsupported("sparse initializers are not supported by " + who + " (sparse initializer " +
                     found + "); store it as a dense initializer");
}

Status save_model(const onnx::ModelProto& model, const fs::path& path) {
  if (model.ByteSizeLong() >= static_cast<size_t>(std::numeric_limits<int>::max()))
    return invalid_argument("model is over 2 GiB; it must be saved with external data");
  std::string bytes;
  if (!model.SerializeToString(&bytes))
    return invalid_argument("cannot serialize the model for '" + path.string() + "'");
  return write_file_atomic(path, bytes);
}

namespace {
template <class Field, class T>
void copy_field(const Field& field, Tensor& t) {
  for (int i = 0; i < field.size(); ++i) t.data<T>()[i] = static_cast<T>(field.Get(i));
}

// Bytes copied into a bool tensor may hold values other than 0 and 1 (a hostile or careless
// writer); loading such a byte as bool is undefined behaviour, so they are read as truthiness, as
// numpy and ONNX Runtime do.
void normalize_bools(Tensor& t) {
  if (t.dtype() != DType::kBool) return;
  auto* b = reinterpret_cast<unsigned char*>(t.raw());
  for (size_t i = 0; i < t.nbytes(); ++i) b[i] = b[i] != 0 ? 1 : 0;
}

// The bytes of an external tensor whose reference, byte count `want` and file tensor_from_proto
// has checked. One of 1 MiB or more whose type is used as stored (not bool, packed or narrow) is
// mapped from its file (map_file_region) rather than read, when its offset suits the element
// size and the system allows; everything else is read.
Expected<Tensor> read_external_tensor(const onnx::TensorProto& p, DType dtype, const Shape& shape,
                                      const ExternalData& ext, int64_t want) {
  const bool as_stored =
      dtype != DType::kBool && !is_narrow_float(dtype) && !is_narrow_integer(dtype);
  if (as_stored && want >= (int64_t{1} << 20) &&
      ext.offset % static_cast<int64_t>(dtype_size(dtype)) == 0)
    if (auto buffer = map_file_region(ext.file, ext.offset, want))
      if (auto mapped = Tensor::adopt(dtype, shape, std::move(*buffer))) return mapped;
  auto made = Tensor::make(dtype, shape);
  if (!made) return std::move(made).status().with_context("tensor '" + p.name() + "'");
  Tensor t = std::move(*made);
  const std::string label = "tensor '" + p.name() + "'";
  std::ifstream in(ext.file, std::ios::binary);
  if (!in)
    return model_error(label + ": cannot open external data file '" + ext.file.string() + "'");
  in.seekg(ext.offset);
  const bool packed = static_cast<size_t>(want) != t.nbytes();
  std::vector<char> packed_bytes(packed ? static_cast<size_t>(want) : 0);
  in.read(packed ? packed_bytes.data() : reinterpret_cast<char*>(t.raw()), want);
  if (!in || in.gcount() != want)
    return model_error(label + ": external data file '" + ext.file.string() +
                       "' is too short for " + std::to_string(want) + " bytes at offset " +
                       std::to_string(ext.offset));
  if (packed)
    unpack_narrow(dtype, reinterpret_cast<const uint8_t*>(packed_bytes.data()), t.numel(),
                  reinterpret_cast<uint8_t*>(t.raw()));
  normalize_bools(t);
  mask_narrow_codes(dtype, reinterpret_cast<uint8_t*>(t.raw()), t.nbytes());
  return t;
}

// An external tensor, after checking that its file holds the bytes its dims claim.
Expected<Tensor> external_tensor(const onnx::TensorProto& p, DType dtype, const Shape& shape,
                                 const fs::path& base_dir) {
  if (dtype == DType::kString)
    return model_error("tensor '" + p.name() + "': string tensors cannot be external");
  ODB_ASSIGN_OR_RETURN(ExternalData ext, external_data(p, base_dir));
  ODB_ASSIGN_OR_RETURN(const int64_t want, external_byte_count(p, ext));
  std::error_code ec;
  const uintmax_t size = fs::file_size(ext.file, ec);
  if (ec)
    return model_error("tensor '" + p.name() + "': cannot read external data file '" +
                       ext.location + "': " + ec.message());
  if (static_cast<uintmax_t>(ext.offset) > size ||
      static_cast<uintmax_t>(want) > size - static_cast<uintmax_t>(ext.offset))
    return model_error("tensor '" + p.name() + "' of shape " + shape_to_string(shape) + " needs " +
                       std::to_string(want) + " bytes at offset " + std::to_string(ext.offset) +
                       " of '" + ext.location + "', which has only " + std::to_string(size) +
                       " bytes");
  return read_external_tensor(p, dtype, shape, ext, want);
}

// Whether the proto stores as many bytes (raw_data) or values (typed fields) as `numel`
// elements of `dtype` need, checked before anything is allocated: a corrupt proto can claim
// absurd dims.
Status check_stored_size(const onnx::TensorProto& p, DType dtype, const Shape& shape,
                         int64_t numel) {
  if (p.has_raw_data() && dtype != DType::kString) {
    auto bytes = dtype_storage_bytes(dtype, numel);
    if (dtype_size(dtype) == 0 || !bytes || p.raw_data().size() != *bytes)
      return model_error("tensor '" + p.name() + "' raw_data has " +
                         std::to_string(p.raw_data().size()) + " bytes, expected " +
                         std::to_string(numel) + " elements of " + std::string(dtype_name(dtype)) +
                         " for shape " + shape_to_string(shape));
    return Status::ok();
  }
  const int64_t stored =
      std::max({p.float_data_size(), p.int32_data_size(), p.int64_data_size(), p.double_data_size(),
                p.uint64_data_size(), p.string_data_size()});
  // int4/uint4/float4e2m1 and int2/uint2 keep one packed byte per int32_data entry.
  const int bits = dtype_bits(dtype);
  int64_t want = numel;
  if (bits == 4 || bits == 2) {  // checked: numel * bits overflows for hostile dims
    auto packed = dtype_storage_bytes(dtype, numel);
    want = packed ? static_cast<int64_t>(*packed) : std::numeric_limits<int64_t>::max();
  }
  if (stored != want)
    return model_error(
        "tensor '" + p.name() + "' of shape " + shape_to_string(shape) + " holds " +
        std::to_string(stored) + " values, expected " + std::to_string(want) +
        (want != numel ? " (packed " + std::string(dtype_name(dtype)) + ")" : std::string()));
  return Status::ok();
}

// The values of the typed field `dtype` is stored in (float_data, int64_data, ...) into `t`.
Status copy_typed_field(const onnx::TensorProto& p, DType dtype, Tensor& t) {
  const int64_t n = t.numel();
  auto size_error = [&](int64_t got) {
    return model_error("tensor '" + p.name() + "' of shape " + shape_to_string(t.shape()) +
                       " holds " + std::to_string(got) + " values, expected " + std::to_string(n));
  };
  switch (dtype) {
    case DType::kFloat:
      if (p.float_data_size() != n) return size_error(p.float_data_size());
      copy_field<decltype(p.float_data()), float>(p.float_data(), t);
      break;
    case DType::kDouble:
      if (p.double_data_size() != n) return size_error(p.double_data_size());
      copy_field<decltype(p.double_data()), double>(p.double_data(), t);
      break;
    case DType::kInt64:
      if (p.int64_data_size() != n) return size_error(p.int64_data_size());
      copy_field<decltype(p.int64_data()), int64_t>(p.int64_data(), t);
      break;
    case DType::kUint32:
    case DType::kUint64:
      if (p.uint64_data_size() != n) return size_error(p.uint64_data_size());
      for (int64_t i = 0; i < n; ++i) t.set_from_double(i, 0);
      if (dtype == DType::kUint64)
        copy_field<decltype(p.uint64_data()), uint64_t>(p.uint64_data(), t);
      else
        copy_field<decltype(p.uint64_data()), uint32_t>(p.uint64_data(), t);
      break;
    case DType::kString:
      if (p.string_data_size() != n) return size_error(p.string_data_size());
      for (int64_t i = 0; i < n; ++i)
        t.strings()[static_cast<size_t>(i)] = p.string_data(static_cast<int>(i));
      break;
    case DType::kFloat16:
    case DType::kBFloat16:
      if (p.int32_data_size() != n) return size_error(p.int32_data_size());
      for (int64_t i = 0; i < n; ++i)
        reinterpret_cast<uint16_t*>(t.raw())[i] =
            static_cast<uint16_t>(p.int32_data(static_cast<int>(i)));
      break;
    case DType::kBool:
      if (p.int32_data_size() != n) return size_error(p.int32_data_size());
      copy_field<decltype(p.int32_data()), bool>(p.int32_data(), t);
      break;
    default:  // int8/16/32 and uint8/16 live in int32_data
      if (p.int32_data_size() != n) return size_error(p.int32_data_size());
      for (int64_t i = 0; i < n; ++i) t.set_from_double(i, p.int32_data(static_cast<int>(i)));
      break;
  }
  return Status::ok();
}

}  // namespace

Expected<Tensor> tensor_from_proto(const onnx::TensorProto& p, const fs::path& base_dir) {
  ODB_ASSIGN_OR_RETURN(DType dtype, dtype_from_onnx(p.data_type()));
  if (dtype == DType::kComplex64 || dtype == DType::kComplex128)
    return unsupported("tensor '" + p.name() + "' has a complex element type");
  Shape shape(p.dims().begin(), p.dims().end());
  auto numel = shape_numel(shape);
  if (!numel) return std::move(numel).status().with_context("tensor '" + p.name() + "'");
  if (p.data_location() == onnx::TensorProto::EXTERNAL)
    return external_tensor(p, dtype, shape, base_dir);
  ODB_RETURN_IF_ERROR(check_stored_size(p, dtype, shape, *numel));
  auto made = Tensor::make(dtype, shape);
  if (!made) return std::move(made).status().with_context("tensor '" + p.name() + "'");
  Tensor t = std::move(*made);
  const int64_t n = t.numel();
  if (p.has_raw_data() && dtype != DType::kString) {
    // The size was checked against dtype_storage_bytes above; sub-byte types are packed.
    unpack_narrow(dtype, reinterpret_cast<const uint8_t*>(p.raw_data().data()), n,
                  reinterpret_cast<uint8_t*>(t.raw()));
    normalize_bools(t);
    mask_narrow_codes(dtype, reinterpret_cast<uint8_t*>(t.raw()), t.nbytes());
    return t;
  }
  if (is_narrow_float(dtype) || is_narrow_integer(dtype)) {
    // int32_data holds one code per entry, or for the 4- and 2-bit types one packed byte.
    const int bits = dtype_bits(dtype);
    std::vector<uint8_t> bytes(static_cast<size_t>(p.int32_data_size()));
    for (size_t i = 0; i < bytes.size(); ++i)
      bytes[i] = static_cast<uint8_t>(p.int32_data(static_cast<int>(i)));
    if (bits == 4 || bits == 2)
      unpack_narrow(dtype, bytes.data(), n, reinterpret_cast<uint8_t*>(t.raw()));
    else if (n)
      std::memcpy(t.raw(), bytes.data(), static_cast<size_t>(n));
    mask_narrow_codes(dtype, reinterpret_cast<uint8_t*>(t.raw()), t.nbytes());
    return t;
  }
  ODB_RETURN_IF_ERROR(copy_typed_field(p, dtype, t));
  return t;
}

onnx::TensorProto tensor_to_proto(const Tensor& t, const std::string& name) {
  onnx::TensorProto p;
  if (!name.empty()) p.set_name(name);
  p.set_data_type(static_cast<int32_t>(t.dtype()));
  for (int64_t d : t.shape()) p.add_dims(d);
  if (t.dtype() == DType::kString) {
    for (const auto& s : t.strings()) p.add_string_data(s);
  } else if (dtype_bits(t.dtype()) < 8) {  // int4, uint4, float4e2m1, int2, uint2, float6
    std::string packed(*dtype_storage_bytes(t.dtype(), t.numel()), '\0');
    pack_narrow(t.dtype(), reinterpret_cast<const uint8_t*>(t.raw()), t.numel(),
                reinterpret_cast<uint8_t*>(packed.data()));
    p.set_raw_data(std::move(packed));
  } else {
    p.set_raw_data(reinterpret_cast<const char*>(t.raw()), t.nbytes());
  }
  return p;
}

namespace {
std::string type_to_string(const onnx::TypeProto& tp) {
  switch (tp.value_case()) {
    case onnx::TypeProto::kTensorType:
      return "tensor(" + std::string(dtype_name(static_cast<DType>(tp.tensor_type().elem_type()))) +
             ")";
    case onnx::TypeProto::kSequenceType:
      return "sequence(" + type_to_string(tp.sequence_type().elem_type()) + ")";
    case onnx::TypeProto::kOptionalType:
      return "optional(" + type_to_string(tp.optional_type().elem_type()) + ")";
    case onnx::TypeProto::kMapType:
      return "map(" + std::string(dtype_name(static_cast<DType>(tp.map_type().key_type()))) + ", " +
             type_to_string(tp.map_type().value_type()) + ")";
    case onnx::TypeProto::kSparseTensorType:
      return "sparse_tensor";
    default:
      return "unknown";
  }
}
}  // namespace

ValueSignature value_signature(const onnx::ValueInfoProto& vi) {
  ValueSignature s;
  s.name = vi.name();
  s.type_string = type_to_string(vi.type());
  if (vi.type().has_tensor_type()) {
    const auto& tt = vi.type().tensor_type();
    s.dtype = static_cast<DType>(tt.elem_type());
    if (tt.has_shape()) {
      s.has_shape = true;
      for (const auto& d : tt.shape().dim()) {
        s.shape.push_back(d.has_dim_value() ? d.dim_value() : -1);
        s.dim_params.push_back(d.has_dim_param() ? d.dim_param() : "");
      }
    }
  }
  return s;
}

std::vector<ValueSignature> model_inputs(const onnx::GraphProto& graph) {
  std::set<std::string> inits;
  for (const auto& i : graph.initializer()) inits.insert(i.name());
  std::vector<ValueSignature> out;
  for (const auto& vi : graph.input())
    if (!inits.count(vi.name())) out.push_back(value_signature(vi));
  return out;
}

std::vector<ValueSignature> model_outputs(const onnx::GraphProto& graph) {
  std::vector<ValueSignature> out;
  for (const auto& vi : graph.output()) out.push_back(value_signature(vi));
  return out;
}

}  // namespace onnxdbg

namespace onnxdbg {

Model::Model(LoadedModel&& loaded)
    : impl_(std::make_shared<const LoadedModel>(std::move(loaded))) {}

Expected<Model> Model::load(const fs::path& path) {
  ODB_ASSIGN_OR_RETURN(LoadedModel loaded, load_model(path));
  return Model(std::move(loaded));
}

fs::path Model::path() const { return impl_ ? impl_->path : fs::path(); }

std::vector<std::string> Model::warnings() const {
  return impl_ ? impl_->warnings : std::vector<std::string>{};
}

const LoadedModel& Model::loaded() const {
  assert(impl_ && "Model::loaded() on an empty Model");
  return *impl_;
}

ModelInfo Model::info() const {
  ModelInfo out;
  if (!impl_) return out;
  const onnx::ModelProto& m = impl_->proto;
  const onnx::GraphProto& g = m.graph();
  out.inputs = model_inputs(g);
  out.outputs = model_outputs(g);
  for (const auto& n : g.node()) {
    NodeInfo& ni = out.nodes.emplace_back();
    ni.name = n.name();
    ni.op_type = n.op_type();
    ni.domain = n.domain();
    ni.inputs.assign(n.input().begin(), n.input().end());
    ni.outputs.assign(n.output().begin(), n.output().end());
    for (const auto& kv : n.metadata_props()) ni.metadata[kv.key()] = kv.value();
  }
  for (const auto& o : m.opset_import())
    out.opsets[o.domain().empty() ? "ai.onnx" : o.domain()] = o.version();
  out.ir_version = m.ir_version();
  out.producer = m.producer_name() +
                 (m.producer_version().empty() ? std::string() : " " + m.producer_version());
  out.warnings = impl_->warnings;
  return out;
}

}  // namespace onnxdbg
