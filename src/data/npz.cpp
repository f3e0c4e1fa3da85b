// .npz reading and writing with libzip. Entry data is read in chunks rather than trusting the
// sizes in the zip directory, so an archive that lies about sizes cannot trigger a huge
// allocation; libzip checks each entry's CRC when it reaches the end of the entry.
#include "data/npz.h"

#include <zip.h>

#include <fstream>
#include <memory>

#include "core/atomic_file.h"
#include "data/npy.h"

namespace onnxdbg {

namespace fs = std::filesystem;

namespace {

struct ZipCloser {
  void operator()(zip_t* z) const { zip_discard(z); }
};
struct ZipFileCloser {
  void operator()(zip_file_t* f) const { zip_fclose(f); }
};
using ZipPtr = std::unique_ptr<zip_t, ZipCloser>;
using ZipFilePtr = std::unique_ptr<zip_file_t, ZipFileCloser>;

std::string zip_error_text(int code) {
  zip_error_t e;
  zip_error_init_with_code(&e, code);
  std::string s = zip_error_strerror(&e);
  zip_error_fini(&e);
  return s;
}

constexpr std::string_view kSuffix = ".npy";

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// Every entry of an open archive; `file` names it in messages ("'a.npz'").
Expected<std::map<std::string, Tensor>> read_entries(zip_t* za, const std::string& file) {
  std::map<std::string, Tensor> out;
  const zip_int64_t n = zip_get_num_entries(za, 0);
  for (zip_int64_t i = 0; i < n; ++i) {
    const auto index = static_cast<zip_uint64_t>(i);
    const char* raw_name = zip_get_name(za, index, 0);
    if (!raw_name)
      return invalid_argument(file + " has an unreadable entry name at index " + std::to_string(i));
    const std::string name = raw_name;
    if (!name.empty() && name.back() == '/') continue;  // a directory entry
    const std::string where = file + " entry '" + name + "'";
    if (!ends_with(name, kSuffix))
      return invalid_argument(where + " is not a .npy array (an .npz holds only NAME.npy entries)");
    ZipFilePtr zf(zip_fopen_index(za, index, 0));
    if (!zf) return invalid_argument("cannot open " + where + ": " + zip_strerror(za));
    std::string bytes;
    char chunk[1 << 16];
    for (;;) {
      const zip_int64_t got = zip_fread(zf.get(), chunk, sizeof(chunk));
      if (got < 0) return invalid_argument(where + " is damaged: " + zip_file_strerror(zf.get()));
      if (got == 0) break;
      bytes.append(chunk, static_cast<size_t>(got));
    }
    auto t = read_npy(bytes, where);
    if (!t) return std::move(t).status();
    std::string key = name.substr(0, name.size() - kSuffix.size());
    if (out.count(key)) return invalid_argument(file + " holds two entries named '" + name + "'");
    out.emplace(std::move(key), std::move(*t));
  }
  return out;
}

Status open_error(int err, const std::string& file) {
  if (err == ZIP_ER_NOZIP)
    return invalid_argument(file + " is not an .npz file (not a zip archive, or truncated)");
  if (err == ZIP_ER_OPEN || err == ZIP_ER_READ || err == ZIP_ER_NOENT)
    return not_found("cannot read " + file + ": " + zip_error_text(err));
  return invalid_argument(file + " is a damaged .npz file: " + zip_error_text(err));
}

}  // namespace

Expected<std::map<std::string, Tensor>> load_npz(const fs::path& path) {
  const std::string file = "'" + path.string() + "'";
  std::error_code ec;
  if (!fs::exists(path, ec)) return not_found("file " + file + " does not exist");
  if (fs::is_directory(path, ec))
    return invalid_argument(file + " is a directory, not an .npz file");
  int err = 0;
  ZipPtr za(zip_open(path.c_str(), ZIP_RDONLY | ZIP_CHECKCONS, &err));
  if (!za) return open_error(err, file);
  return read_entries(za.get(), file);
}

Expected<std::map<std::string, Tensor>> read_npz(std::string_view bytes, const std::string& what) {
  zip_error_t error;
  zip_error_init(&error);
  // An empty buffer is an empty source to libzip, which then opens an empty archive: say so here.
  if (bytes.empty()) return invalid_argument(what + " is empty, not an .npz archive");
  zip_source_t* src = zip_source_buffer_create(bytes.data(), bytes.size(), 0, &error);
  if (!src) {
    zip_error_fini(&error);
    return invalid_argument("cannot read " + what + ": out of memory");
  }
  ZipPtr za(zip_open_from_source(src, ZIP_RDONLY | ZIP_CHECKCONS, &error));
  const int err = zip_error_code_zip(&error);
  zip_error_fini(&error);
  if (!za) {
    zip_source_free(src);  // not taken over by a failed open
    return open_error(err, what);
  }
  return read_entries(za.get(), what);
}

Status save_npz(const fs::path& path, const std::map<std::string, Tensor>& tensors, bool compress) {
  const std::string file = "'" + path.string() + "'";
  if (tensors.empty()) {
    // libzip deletes an archive left with no entries; numpy writes an empty zip, and so do we:
    // just the 22-byte end-of-central-directory record.
    static const char kEmptyZip[22] = {'P', 'K', 5, 6};
    return write_file_atomic(path, std::string_view(kEmptyZip, sizeof(kEmptyZip)));
  }
  int err = 0;
  ZipPtr za(zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &err));
  if (!za) return invalid_argument("cannot create " + file + ": " + zip_error_text(err));
  // libzip reads the buffers at zip_close, so they must outlive the loop.
  std::vector<std::string> buffers;
  buffers.reserve(tensors.size());
  for (const auto& [name, t] : tensors) {
    buffers.push_back(write_npy(t));
    const std::string& b = buffers.back();
    zip_source_t* src = zip_source_buffer(za.get(), b.data(), b.size(), 0);
    if (!src)
      return invalid_argument("cannot add '" + name + "' to " + file + ": " +
                              zip_strerror(za.get()));
    const std::string entry = name + std::string(kSuffix);
    const zip_int64_t idx =
        zip_file_add(za.get(), entry.c_str(), src, ZIP_FL_ENC_UTF_8 | ZIP_FL_OVERWRITE);
    if (idx < 0) {
      zip_source_free(src);
      return invalid_argument("cannot add entry '" + entry + "' to " + file + ": " +
                              zip_strerror(za.get()));
    }
    if (zip_set_file_compression(za.get(), static_cast<zip_uint64_t>(idx),
                                 compress ? ZIP_CM_DEFLATE : ZIP_CM_STORE, 0) != 0)
      return invalid_argument("cannot set compression of '" + entry + "' in " + file + ": " +
                              zip_strerror(za.get()));
  }
  if (zip_close(za.get()) != 0)
    return invalid_argument("cannot write " + file + ": " + zip_strerror(za.get()));
  (void)za.release();  // zip_close freed it
  return Status::ok();
}

}  // namespace onnxdbg
