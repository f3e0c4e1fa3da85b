// External tensor data: parsing and checking references, mapping, and writing models with their
// data streamed beside them (see external_data.h).
#include "model/external_data.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <limits>
#include <set>

#include "core/atomic_file.h"
#include "model/model.h"

namespace onnxdbg {

namespace fs = std::filesystem;

namespace {

// Resolves an external-data location safely inside base_dir (ONNX IR spec: "location" is
// relative to the model file's folder): no absolute path, no "..", and no symlink (of the file or
// a folder on the way) that leads out of the folder, as ONNX Runtime refuses them.
Expected<fs::path> resolve_external(const std::string& location, const fs::path& base_dir,
                                    const std::string& tensor) {
  fs::path loc(location);
  if (location.empty())
    return model_error("tensor '" + tensor + "' has external data without a location");
  if (loc.is_absolute())
    return model_error("tensor '" + tensor + "' has external data at absolute path '" + location +
                       "'; ONNX requires a path relative to the model's folder");
  fs::path norm = loc.lexically_normal();
  if (!norm.empty() && *norm.begin() == "..")
    return model_error("tensor '" + tensor + "' has external data at '" + location +
                       "', which escapes the model's folder; refusing to read it");
  const fs::path file = base_dir / norm;
  std::error_code ec1, ec2;
  const fs::path real_base = fs::weakly_canonical(base_dir.empty() ? fs::path(".") : base_dir, ec1);
  const fs::path real_file = fs::weakly_canonical(file, ec2);
  if (!ec1 && !ec2) {
    const fs::path rel = real_file.lexically_relative(real_base);
    if (rel.empty() || *rel.begin() == "..")
      return model_error("tensor '" + tensor + "' has external data at '" + location +
                         "', a symbolic link to '" + real_file.string() +
                         "' outside the model's folder; refusing to read it");
  }
  return file;
}

// A non-negative decimal integer of an external_data entry, all of it ("1e3", "-5", "12abc" and
// values beyond int64 are refused).
Expected<int64_t> external_number(const onnx::StringStringEntryProto& kv,
                                  const std::string& tensor) {
  const std::string& v = kv.value();
  int64_t n = 0;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (v.empty() || ec != std::errc() || end != v.data() + v.size() || n < 0)
    return model_error("tensor '" + tensor + "' has external data " + kv.key() + " '" + v +
                       "', which is not a non-negative whole number of bytes");
  return n;
}

bool is_external(const onnx::TensorProto& t) {
  return t.data_location() == onnx::TensorProto::EXTERNAL;
}

// Calls fn(TensorProto&) -> Status for every initializer and tensor attribute of `g` and its
// subgraphs.
template <class Fn>
Status for_each_tensor(onnx::GraphProto& g, Fn& fn) {
  for (auto& t : *g.mutable_initializer()) ODB_RETURN_IF_ERROR(fn(t));
  for (auto& n : *g.mutable_node())
    for (auto& a : *n.mutable_attribute()) {
      if (a.has_t()) ODB_RETURN_IF_ERROR(fn(*a.mutable_t()));
      for (auto& t : *a.mutable_tensors()) ODB_RETURN_IF_ERROR(fn(t));
      if (a.has_g()) ODB_RETURN_IF_ERROR(for_each_tensor(*a.mutable_g(), fn));
      for (auto& sg : *a.mutable_graphs()) ODB_RETURN_IF_ERROR(for_each_tensor(sg, fn));
    }
  return Status::ok();
}

template <class Fn>
void for_each_tensor(const onnx::GraphProto& g, Fn& fn) {
  for (const auto& t : g.initializer()) fn(t);
  for (const auto& n : g.node())
    for (const auto& a : n.attribute()) {
      if (a.has_t()) fn(a.t());
      for (const auto& t : a.tensors()) fn(t);
      if (a.has_g()) for_each_tensor(a.g(), fn);
      for (const auto& sg : a.graphs()) for_each_tensor(sg, fn);
    }
}

Status write_error(const fs::path& path, int err) {
  return invalid_argument("cannot write '" + path.string() + "': " + std::strerror(err));
}

// The data file being written: a temporary file beside its final path, renamed over it by
// commit(); removed if never committed.
class DataFile {
 public:
  static Expected<DataFile> create(const fs::path& path) {
    const fs::path dir = path.has_parent_path() ? path.parent_path() : ".";
    std::string pattern = (dir / ("." + path.filename().string() + ".tmpXXXXXX")).string();
    std::vector<char> name(pattern.begin(), pattern.end());
    name.push_back('\0');
    const int fd = mkstemp(name.data());
    if (fd < 0) return write_error(path, errno);
    DataFile f;
    f.path_ = path;
    f.tmp_ = name.data();
    f.fd_ = fd;
    return f;
  }
  DataFile() = default;
  DataFile(DataFile&& o) noexcept
      : path_(std::move(o.path_)),
        tmp_(std::move(o.tmp_)),
        fd_(std::exchange(o.fd_, -1)),
        size_(o.size_) {}
  DataFile& operator=(DataFile&&) = delete;
  ~DataFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!tmp_.empty()) ::unlink(tmp_.c_str());
  }

  int64_t size() const { return size_; }
  Status append(std::string_view bytes) {
    if (const int err = write_all_fd(fd_, bytes)) return write_error(path_, err);
    size_ += static_cast<int64_t>(bytes.size());
    return Status::ok();
  }
  Status align(int64_t alignment) {
    const int64_t pad = (alignment - size_ % alignment) % alignment;
    return append(std::string(static_cast<size_t>(pad), '\0'));
  }
  // Copies `length` bytes of `src` at `offset`, 4 MiB at a time.
  Status copy_from(const ExternalData& src, int64_t length, const std::string& tensor) {
    const int in = ::open(src.file.c_str(), O_RDONLY | O_CLOEXEC);
    if (in < 0)
      return model_error("tensor '" + tensor + "': cannot open external data file '" +
                         src.location + "': " + std::strerror(errno));
    std::string buf(std::min<int64_t>(length, int64_t{4} << 20), '\0');
    Status st = Status::ok();
    for (int64_t done = 0; done < length && st;) {
      const size_t want = static_cast<size_t>(std::min<int64_t>(length - done, buf.size()));
      const ssize_t n = ::pread(in, buf.data(), want, static_cast<off_t>(src.offset + done));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        st = model_error("tensor '" + tensor + "': external data file '" + src.location +
                         "' is too short for " + std::to_string(length) + " bytes at offset " +
                         std::to_string(src.offset));
        break;
      }
      st = append(std::string_view(buf.data(), static_cast<size_t>(n)));
      done += n;
    }
    ::close(in);
    return st;
  }
  Status commit() {
    const mode_t mask = ::umask(0);
    ::umask(mask);
    if (::fchmod(fd_, 0666 & ~mask) != 0 || ::fsync(fd_) != 0) return write_error(path_, errno);
    const int fd = std::exchange(fd_, -1);
    if (::close(fd) != 0) return write_error(path_, errno);
    if (::rename(tmp_.c_str(), path_.c_str()) != 0) return write_error(path_, errno);
    tmp_.clear();
    return Status::ok();
  }

 private:
  fs::path path_;
  std::string tmp_;
  int fd_ = -1;
  int64_t size_ = 0;
};

// `t` made into an external reference to `length` bytes of `location` at `offset`; its name,
// type, dims and doc string kept, every value field cleared.
void make_external(onnx::TensorProto& t, const std::string& location, int64_t offset,
                   int64_t length) {
  onnx::TensorProto ref;
  ref.set_name(t.name());
  ref.set_data_type(t.data_type());
  *ref.mutable_dims() = t.dims();
  if (t.has_doc_string()) ref.set_doc_string(t.doc_string());
  ref.set_data_location(onnx::TensorProto::EXTERNAL);
  const std::pair<const char*, std::string> entries[] = {{"location", location},
                                                         {"offset", std::to_string(offset)},
                                                         {"length", std::to_string(length)}};
  for (const auto& [key, value] : entries) {
    auto* e = ref.add_external_data();
    e->set_key(key);
    e->set_value(value);
  }
  t = std::move(ref);
}

}  // namespace

Expected<ExternalData> external_data(const onnx::TensorProto& t, const fs::path& base_dir) {
  ExternalData ext;
  for (const auto& kv : t.external_data()) {
    if (kv.key() == "location") {
      ext.location = kv.value();
    } else if (kv.key() == "offset") {
      ODB_ASSIGN_OR_RETURN(ext.offset, external_number(kv, t.name()));
    } else if (kv.key() == "length") {
      ODB_ASSIGN_OR_RETURN(ext.length, external_number(kv, t.name()));
    }
  }
  ODB_ASSIGN_OR_RETURN(ext.file, resolve_external(ext.location, base_dir, t.name()));
  return ext;
}

Expected<int64_t> external_byte_count(const onnx::TensorProto& t, const ExternalData& ext) {
  ODB_ASSIGN_OR_RETURN(DType dtype, dtype_from_onnx(t.data_type()));
  if (dtype == DType::kString)
    return model_error("tensor '" + t.name() + "': string tensors cannot be external");
  const Shape shape(t.dims().begin(), t.dims().end());
  ODB_ASSIGN_OR_RETURN(int64_t numel, shape_numel(shape));
  auto bytes = dtype_storage_bytes(dtype, numel);
  if (!bytes || dtype_size(dtype) == 0 ||
      *bytes > static_cast<size_t>(std::numeric_limits<int64_t>::max()))
    return model_error("tensor '" + t.name() + "' of shape " + shape_to_string(shape) +
                       " has too many bytes to be stored anywhere");
  const auto want = static_cast<int64_t>(*bytes);
  if (ext.length >= 0 && ext.length != want)
    return model_error("tensor '" + t.name() + "' external data length " +
                       std::to_string(ext.length) + " does not match its shape (" +
                       std::to_string(want) + " bytes)");
  return want;
}

Status check_external_data(const onnx::GraphProto& g, const fs::path& base_dir) {
  Status st = Status::ok();
  auto check_tensor = [&](const onnx::TensorProto& t) {
    if (!st || !is_external(t)) return;
    auto ext = external_data(t, base_dir);
    if (!ext) {
      st = ext.status();
      return;
    }
    std::error_code ec;
    const uintmax_t size = fs::file_size(ext->file, ec);
    if (ec) {
      st = model_error("tensor '" + t.name() + "' has its data in '" + ext->location +
                       "', which cannot be read: " + ec.message());
      return;
    }
    const auto offset = static_cast<uintmax_t>(ext->offset);
    const uintmax_t length = ext->length < 0 ? 0 : static_cast<uintmax_t>(ext->length);
    if (offset > size || length > size - offset)
      st = model_error("tensor '" + t.name() + "' expects bytes " + std::to_string(offset) + ".." +
                       std::to_string(offset) + "+" + std::to_string(length) + " of '" +
                       ext->location + "', which has only " + std::to_string(size) + " bytes");
  };
  for_each_tensor(g, check_tensor);
  return st;
}

std::vector<std::string> external_data_locations(const onnx::GraphProto& g) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  auto visit = [&](const onnx::TensorProto& t) {
    if (!is_external(t)) return;
    for (const auto& kv : t.external_data())
      if (kv.key() == "location" && seen.insert(kv.value()).second) out.push_back(kv.value());
  };
  for_each_tensor(g, visit);
  return out;
}

Expected<ByteBuffer> map_file_region(const fs::path& file, int64_t offset, int64_t length) {
  if (offset < 0 || length <= 0) return model_error("nothing to map in '" + file.string() + "'");
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return model_error("cannot open '" + file.string() + "': " + std::strerror(errno));
  const auto page = static_cast<int64_t>(::sysconf(_SC_PAGESIZE));
  const int64_t start = offset - offset % page;
  const auto skip = static_cast<size_t>(offset - start);
  const size_t span = skip + static_cast<size_t>(length);
  void* p =
      ::mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, static_cast<off_t>(start));
  const int err = errno;
  ::close(fd);
  if (p == MAP_FAILED)
    return model_error("cannot map '" + file.string() + "': " + std::strerror(err));
  struct Mapping {
    void* base;
    size_t span;
  };
  auto* owner = new Mapping{p, span};
  return ByteBuffer::adopt(
      static_cast<std::byte*>(p) + skip, static_cast<size_t>(length),
      [](void* o) noexcept {
        auto* m = static_cast<Mapping*>(o);
        ::munmap(m->base, m->span);
        delete m;
      },
      owner);
}

Status inline_external_data(onnx::ModelProto& model, const fs::path& base_dir, int64_t limit) {
  int64_t external = 0;
  auto count = [&](onnx::TensorProto& t) -> Status {
    if (!is_external(t)) return Status::ok();
    ODB_ASSIGN_OR_RETURN(ExternalData ext, external_data(t, base_dir));
    ODB_ASSIGN_OR_RETURN(int64_t bytes, external_byte_count(t, ext));
    external += bytes;
    return Status::ok();
  };
  ODB_RETURN_IF_ERROR(for_each_tensor(*model.mutable_graph(), count));
  const int64_t total = static_cast<int64_t>(model.ByteSizeLong()) + external;
  if (total >= limit)
    return invalid_argument("the model with its " + std::to_string(external >> 20) +
                            " MiB of external data inline would exceed " +
                            (limit == kMaxInlineModelBytes ? std::string("protobuf's 2 GiB limit")
                                                           : std::to_string(limit) + " bytes"));
  if (external == 0) return Status::ok();
  auto inline_tensor = [&](onnx::TensorProto& t) -> Status {
    if (!is_external(t)) return Status::ok();
    ODB_ASSIGN_OR_RETURN(Tensor v, tensor_from_proto(t, base_dir));
    onnx::TensorProto inl = tensor_to_proto(v, t.name());
    if (t.has_doc_string()) inl.set_doc_string(t.doc_string());
    t = std::move(inl);
    return Status::ok();
  };
  return for_each_tensor(*model.mutable_graph(), inline_tensor);
}

Status save_model_with_external_data(const onnx::ModelProto& model, const fs::path& base_dir,
                                     const fs::path& out, bool share_source_data,
                                     int64_t inline_limit) {
  if (share_source_data) {
    std::error_code ec;
    const fs::path folder = out.has_parent_path() ? out.parent_path() : fs::path(".");
    if (fs::equivalent(folder, base_dir.empty() ? fs::path(".") : base_dir, ec))
      return save_model(model, out);
  }
  onnx::ModelProto copy = model;
  Status inlined = inline_external_data(copy, base_dir, inline_limit);
  if (inlined) {
    // A "<out>.data" that the model being replaced used (an earlier, larger result of reduce)
    // would be left behind, 3 GB of nothing: it goes once the self-contained model is written.
    const fs::path old_data = out.parent_path() / (out.filename().string() + ".data");
    std::error_code ec;
    bool stale = false;
    if (fs::exists(old_data, ec))
      if (auto old = load_model(out))
        stale = external_data_locations(old->proto.graph()) ==
                std::vector<std::string>{old_data.filename().string()};
    ODB_RETURN_IF_ERROR(save_model(copy, out));
    if (stale) fs::remove(old_data, ec);
    return Status::ok();
  }
  if (inlined.code() != ErrorCode::kInvalidArgument) return inlined;
  const std::string data_name = out.filename().string() + ".data";
  ODB_ASSIGN_OR_RETURN(DataFile data, DataFile::create(out.parent_path() / data_name));
  auto move_out = [&](onnx::TensorProto& t) -> Status {
    if (t.data_type() == onnx::TensorProto::STRING) return Status::ok();
    const bool ext = is_external(t);
    if (!ext && static_cast<int64_t>(t.ByteSizeLong()) <= 1024) return Status::ok();
    // Large tensors start on a page (4096 bytes) so that runtimes can map them; small ones on a
    // 64-byte line, which wastes less.
    auto place = [&](int64_t length) -> Expected<int64_t> {
      ODB_RETURN_IF_ERROR(data.align(length >= (int64_t{64} << 10) ? 4096 : 64));
      return data.size();
    };
    int64_t offset = 0, length = 0;
    if (ext) {
      ODB_ASSIGN_OR_RETURN(ExternalData src, external_data(t, base_dir));
      ODB_ASSIGN_OR_RETURN(length, external_byte_count(t, src));
      ODB_ASSIGN_OR_RETURN(offset, place(length));
      ODB_RETURN_IF_ERROR(data.copy_from(src, length, t.name()));
    } else {
      ODB_ASSIGN_OR_RETURN(Tensor v, tensor_from_proto(t, base_dir));
      const onnx::TensorProto raw = tensor_to_proto(v, t.name());
      length = static_cast<int64_t>(raw.raw_data().size());
      ODB_ASSIGN_OR_RETURN(offset, place(length));
      ODB_RETURN_IF_ERROR(data.append(raw.raw_data()));
    }
    make_external(t, data_name, offset, length);
    return Status::ok();
  };
  ODB_RETURN_IF_ERROR(for_each_tensor(*copy.mutable_graph(), move_out));
  ODB_RETURN_IF_ERROR(data.commit());
  return save_model(copy, out);
}

}  // namespace onnxdbg
