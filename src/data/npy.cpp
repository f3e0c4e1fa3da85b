// .npy reading and writing. The header is a Python dict literal; a small parser reads exactly the
// subset numpy writes ({'descr': str, 'fortran_order': bool, 'shape': tuple of ints}) and refuses
// everything else, so a hostile header cannot make us allocate or read out of bounds.
#include "data/npy.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <limits>

#include "core/atomic_file.h"
#include "onnxdbg/narrow_types.h"

namespace onnxdbg {

namespace fs = std::filesystem;

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;

struct NpyHeader {
  std::string descr;
  bool fortran_order = false;
  Shape shape;
  bool has_descr = false, has_fortran = false, has_shape = false;
};

// Parser for numpy's header dict. Returns an error message (empty on success).
class HeaderParser {
 public:
  explicit HeaderParser(std::string_view s) : s_(s) {}

  std::string parse(NpyHeader& h) {
    skip_ws();
    if (!eat('{')) return "header does not start with '{'";
    for (;;) {
      skip_ws();
      if (eat('}')) break;
      std::string key;
      if (!parse_string(key)) return "expected a quoted key in the header dict";
      skip_ws();
      if (!eat(':')) return "expected ':' after key '" + key + "'";
      skip_ws();
      if (key == "descr") {
        if (peek() == '[') return "structured dtype (a list of fields)";
        if (!parse_string(h.descr)) return "'descr' is not a string";
        h.has_descr = true;
      } else if (key == "fortran_order") {
        if (eat_word("True"))
          h.fortran_order = true;
        else if (eat_word("False"))
          h.fortran_order = false;
        else
          return "'fortran_order' is not True or False";
        h.has_fortran = true;
      } else if (key == "shape") {
        std::string err = parse_shape(h.shape);
        if (!err.empty()) return err;
        h.has_shape = true;
      } else {
        return "unexpected key '" + key + "' in the header";
      }
      skip_ws();
      if (eat(',')) continue;
      skip_ws();
      if (eat('}')) break;
      return "expected ',' or '}' in the header dict";
    }
    skip_ws();
    if (pos_ != s_.size()) return "trailing characters after the header dict";
    if (!h.has_descr || !h.has_fortran || !h.has_shape)
      return "header lacks one of 'descr', 'fortran_order', 'shape'";
    return {};
  }

 private:
  char peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }
  bool eat(char c) {
    if (peek() != c) return false;
    ++pos_;
    return true;
  }
  bool eat_word(std::string_view w) {
    if (s_.substr(pos_, w.size()) != w) return false;
    pos_ += w.size();
    return true;
  }
  void skip_ws() {
    while (pos_ < s_.size() &&
           (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r'))
      ++pos_;
  }
  bool parse_string(std::string& out) {
    const char q = peek();
    if (q != '\'' && q != '"') return false;
    ++pos_;
    out.clear();
    while (pos_ < s_.size() && s_[pos_] != q) {
      if (s_[pos_] == '\\') return false;  // numpy never writes escapes in these keys
      out += s_[pos_++];
    }
    return eat(q);
  }
  std::string parse_shape(Shape& shape) {
    if (!eat('(')) return "'shape' is not a tuple";
    shape.clear();
    for (;;) {
      skip_ws();
      if (eat(')')) return {};
      if (peek() < '0' || peek() > '9')
        return "'shape' holds something other than non-negative ints";
      int64_t v = 0;
      while (peek() >= '0' && peek() <= '9') {
        const int d = peek() - '0';
        if (v > (std::numeric_limits<int64_t>::max() - d) / 10)
          return "a 'shape' dimension overflows int64";
        v = v * 10 + d;
        ++pos_;
      }
      eat('L');  // Python 2 longs, written by old numpy
      shape.push_back(v);
      skip_ws();
      if (eat(',')) continue;
      skip_ws();
      if (eat(')')) return {};
      return "malformed 'shape' tuple";
    }
  }

  std::string_view s_;
  size_t pos_ = 0;
};

struct ElementType {
  DType dtype = DType::kUndefined;
  size_t itemsize = 0;   // bytes per element in the file
  char string_kind = 0;  // 'S' or 'U' for string dtypes
};

// Maps a numpy descr such as '<f4' to an element type; returns an error Status for others.
Expected<ElementType> parse_descr(const std::string& descr, const std::string& what) {
  auto bad = [&](const std::string& why) {
    return unsupported(what + " has numpy dtype '" + descr + "': " + why);
  };
  // ml_dtypes' names ('float8_e4m3fn', 'int4', 'bfloat16'): one element per byte (two for
  // bfloat16) in ml_dtypes' layout, the code in the low bits.
  if (auto named = dtype_from_name(descr);
      named && dtype_name(*named) == descr &&
      (is_narrow_float(*named) || is_narrow_integer(*named) || *named == DType::kBFloat16)) {
    ElementType e;
    e.dtype = *named;
    e.itemsize = dtype_size(*named);
    return e;
  }
  // np.save writes an ml_dtypes array's dtype.str, which names no type: '<V1' (or '<f1' for
  // float8_e5m2) for the one-byte types, '<V2' for bfloat16.
  if (descr == "<V1" || descr == "|V1" || descr == "<V2" || descr == "|V2" || descr == "<f1" ||
      descr == "|f1")
    return bad(
        "this is what np.save writes for an ml_dtypes array (float8, int4, bfloat16, ...) and the "
        "element type is lost; save such arrays with onnxdbg.save_npy / onnxdbg.save_npz in "
        "Python (they write the ml_dtypes name as 'descr') or as an ONNX TensorProto (.pb)");
  if (descr.size() < 2) return bad("not a recognised type string");
  const char order = descr[0];
  const char kind = descr[1];
  const std::string size_text = descr.substr(2);
  if (order != '<' && order != '>' && order != '|' && order != '=')
    return bad("not a recognised type string");
  if (size_text.empty() || size_text.size() > 9 ||
      size_text.find_first_not_of("0123456789") != std::string::npos)
    return bad("not a recognised type string (object, datetime and void dtypes are unsupported)");
  const size_t size = std::stoul(size_text);
  ElementType e;
  if (kind == 'S' || kind == 'U') {
    if (size == 0) return bad("zero-width strings are unsupported");
    if (kind == 'U' && order == '>')
      return bad("big-endian data is unsupported; save it as little-endian ('<')");
    e.dtype = DType::kString;
    e.string_kind = kind;
    e.itemsize = kind == 'U' ? size * 4 : size;
    return e;
  }
  struct Entry {
    size_t size;
    DType dtype;
    char kind;
  };
  static constexpr Entry kTable[] = {
      {2, DType::kFloat16, 'f'},   {4, DType::kFloat, 'f'},       {8, DType::kDouble, 'f'},
      {1, DType::kInt8, 'i'},      {2, DType::kInt16, 'i'},       {4, DType::kInt32, 'i'},
      {8, DType::kInt64, 'i'},     {1, DType::kUint8, 'u'},       {2, DType::kUint16, 'u'},
      {4, DType::kUint32, 'u'},    {8, DType::kUint64, 'u'},      {1, DType::kBool, 'b'},
      {8, DType::kComplex64, 'c'}, {16, DType::kComplex128, 'c'},
  };
  for (const auto& t : kTable) {
    if (t.kind == kind && t.size == size) {
      if (order == '>' && size > 1)
        return bad(
            "big-endian data is unsupported; save it as little-endian ('<'), e.g. "
            "a.astype(a.dtype.newbyteorder('<'))");
      e.dtype = t.dtype;
      e.itemsize = size;
      return e;
    }
  }
  return bad("element type not supported (supported: f2 f4 f8 i1-i8 u1-u8 b1 c8 c16 S U)");
}

void append_utf8(std::string& out, uint32_t cp) {
  if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) cp = 0xFFFD;
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

uint32_t read_le(const unsigned char* p, int n) {
  uint32_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

std::string shape_tuple(const Shape& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  if (shape.size() == 1) s += ',';
  return s + ')';
}

// The magic, the format version and the header's length: where the header starts and how long it
// is, checked against the bytes there are.
Status read_preamble(std::string_view bytes, const std::string& what, size_t& header_start,
                     size_t& header_len) {
  const auto* u = reinterpret_cast<const unsigned char*>(bytes.data());
  if (bytes.size() < kMagicLen || std::memcmp(bytes.data(), kMagic, kMagicLen) != 0)
    return invalid_argument(what + " is not a .npy file (no \\x93NUMPY magic)");
  if (bytes.size() < kMagicLen + 2)
    return invalid_argument(what + " is truncated inside the .npy preamble");
  const int major = u[6], minor = u[7];
  if (major == 1) {
    if (bytes.size() < 10) return invalid_argument(what + " is truncated inside the .npy preamble");
    header_len = read_le(u + 8, 2);
    header_start = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) return invalid_argument(what + " is truncated inside the .npy preamble");
    header_len = read_le(u + 8, 4);
    header_start = 12;
  } else {
    return unsupported(what + " uses .npy format version " + std::to_string(major) + "." +
                       std::to_string(minor) + "; versions 1.0, 2.0 and 3.0 are supported");
  }
  if (header_len > bytes.size() - header_start)
    return invalid_argument(what + " is truncated: its .npy header claims " +
                            std::to_string(header_len) + " bytes but only " +
                            std::to_string(bytes.size() - header_start) + " follow");
  return Status::ok();
}

// The array's `need` data bytes into `t`: fixed-width strings decoded, bools normalised, other
// types copied (narrow codes masked).
void copy_npy_data(const ElementType& et, const unsigned char* data, size_t need, Tensor& t) {
  if (et.dtype == DType::kString) {
    for (int64_t i = 0; i < t.numel(); ++i) {
      const unsigned char* p = data + static_cast<size_t>(i) * et.itemsize;
      std::string s;
      if (et.string_kind == 'S') {
        size_t n = et.itemsize;
        while (n > 0 && p[n - 1] == 0) --n;
        s.assign(reinterpret_cast<const char*>(p), n);
      } else {
        size_t n = et.itemsize / 4;
        while (n > 0 && read_le(p + 4 * (n - 1), 4) == 0) --n;
        for (size_t k = 0; k < n; ++k) append_utf8(s, read_le(p + 4 * k, 4));
      }
      t.strings()[static_cast<size_t>(i)] = std::move(s);
    }
  } else if (et.dtype == DType::kBool) {
    // A bool byte other than 0/1 is undefined behaviour in C++; normalise as numpy's truthiness.
    for (size_t i = 0; i < need; ++i) t.raw()[i] = std::byte{data[i] != 0};
  } else if (need) {
    std::memcpy(t.raw(), data, need);
    // Bits above a narrow type's width are not part of its code (ml_dtypes leaves them zero).
    mask_narrow_codes(t.dtype(), reinterpret_cast<uint8_t*>(t.raw()), need);
  }
}

// The descr of `t`'s element type ("<f4", "|S12": `str_width` is the widest string).
std::string npy_descr(const Tensor& t, size_t& str_width) {
  switch (t.dtype()) {
    case DType::kFloat16:
      return "<f2";
    case DType::kFloat:
      return "<f4";
    case DType::kDouble:
      return "<f8";
    case DType::kInt8:
      return "|i1";
    case DType::kInt16:
      return "<i2";
    case DType::kInt32:
      return "<i4";
    case DType::kInt64:
      return "<i8";
    case DType::kUint8:
      return "|u1";
    case DType::kUint16:
      return "<u2";
    case DType::kUint32:
      return "<u4";
    case DType::kUint64:
      return "<u8";
    case DType::kBool:
      return "|b1";
    case DType::kComplex64:
      return "<c8";
    case DType::kComplex128:
      return "<c16";
    case DType::kString:
      str_width = 1;
      for (const auto& s : t.strings()) str_width = std::max(str_width, s.size());
      return "|S" + std::to_string(str_width);
    default:
      if (is_narrow_float(t.dtype()) || is_narrow_integer(t.dtype()))
        return std::string(dtype_name(t.dtype()));  // one code per byte, as in memory
      return "<f4";  // unreachable: kUndefined and kBFloat16 are replaced before
  }
}

// Magic, version, header length and the header, padded with spaces and ended with '\n' so that
// all of it is a multiple of 64 bytes (format 2.0 when the header does not fit 1.0's uint16).
std::string npy_preamble(const std::string& descr, const Shape& shape) {
  std::string header =
      "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape_tuple(shape) + ", }";
  size_t preamble = kMagicLen + 2 + 2;
  size_t total = (preamble + header.size() + 1 + 63) / 64 * 64;
  if (total - preamble > 65535) {
    preamble = kMagicLen + 2 + 4;
    total = (preamble + header.size() + 1 + 63) / 64 * 64;
  }
  header.append(total - preamble - header.size() - 1, ' ');
  header += '\n';
  std::string out(kMagic, kMagicLen);
  const bool v2 = preamble == kMagicLen + 2 + 4;
  out += static_cast<char>(v2 ? 2 : 1);
  out += '\0';
  const size_t hl = header.size();
  for (int i = 0; i < (v2 ? 4 : 2); ++i) out += static_cast<char>((hl >> (8 * i)) & 0xFF);
  return out + header;
}

}  // namespace

Expected<Tensor> read_npy(std::string_view bytes, const std::string& what) {
  size_t header_start = 0, header_len = 0;
  ODB_RETURN_IF_ERROR(read_preamble(bytes, what, header_start, header_len));
  NpyHeader h;
  const std::string err = HeaderParser(bytes.substr(header_start, header_len)).parse(h);
  if (!err.empty()) {
    if (err.rfind("structured", 0) == 0)
      return unsupported(what + " holds a " + err + "; only plain arrays are supported");
    return invalid_argument(what + " has a malformed .npy header: " + err);
  }
  ODB_ASSIGN_OR_RETURN(ElementType et, parse_descr(h.descr, what));
  if (h.fortran_order) {
    // With at most one dimension above 1, Fortran and C order lay the bytes out identically.
    int non_unit = 0;
    for (int64_t d : h.shape) non_unit += d > 1;
    if (non_unit > 1)
      return unsupported(what +
                         " is stored in Fortran (column-major) order; save it with "
                         "np.ascontiguousarray(a) first");
  }
  auto numel = shape_numel(h.shape);
  if (!numel) return std::move(numel).status().with_context(what);
  const size_t data_start = header_start + header_len;
  const size_t available = bytes.size() - data_start;
  if (*numel > 0 && et.itemsize > std::numeric_limits<size_t>::max() / static_cast<size_t>(*numel))
    return invalid_argument(what + " has shape " + shape_tuple(h.shape) +
                            " whose byte size overflows");
  const size_t need = static_cast<size_t>(*numel) * et.itemsize;
  if (need != available)
    return invalid_argument(what + " has " + std::to_string(available) +
                            " data bytes but its header (" + h.descr + ", shape " +
                            shape_tuple(h.shape) + ") needs " + std::to_string(need) +
                            (need > available ? "; the file is truncated" : ""));
  auto made = Tensor::make(et.dtype, h.shape);
  if (!made) return std::move(made).status().with_context(what);
  Tensor t = std::move(*made);
  copy_npy_data(et, reinterpret_cast<const unsigned char*>(bytes.data()) + data_start, need, t);
  return t;
}

std::string write_npy(const Tensor& in) {
  const Tensor* t = &in;
  Tensor widened;
  if (in.dtype() == DType::kBFloat16) {
    widened = Tensor(DType::kFloat, in.shape());
    for (int64_t i = 0; i < in.numel(); ++i) widened.set_from_double(i, in.get_as_double(i));
    t = &widened;
  } else if (in.dtype() == DType::kUndefined) {
    widened = Tensor(DType::kFloat, {});
    t = &widened;
  }
  size_t str_width = 1;
  std::string out = npy_preamble(npy_descr(*t, str_width), t->shape());
  if (t->dtype() == DType::kString) {
    out.reserve(out.size() + t->strings().size() * str_width);
    for (const auto& s : t->strings()) {
      out += s;
      out.append(str_width - s.size(), '\0');
    }
  } else {
    out.append(reinterpret_cast<const char*>(t->raw()), t->nbytes());
  }
  return out;
}

Expected<std::string> read_file_bytes(const fs::path& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return not_found("file '" + path.string() + "' does not exist");
  if (fs::is_directory(path, ec))
    return invalid_argument("'" + path.string() + "' is a directory, not a file");
  std::ifstream in(path, std::ios::binary);
  if (!in) return not_found("cannot open '" + path.string() + "'");
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return not_found("cannot read '" + path.string() + "'");
  return bytes;
}

Expected<Tensor> load_npy(const fs::path& path) {
  ODB_ASSIGN_OR_RETURN(std::string bytes, read_file_bytes(path));
  return read_npy(bytes, "'" + path.string() + "'");
}

Status save_npy(const fs::path& path, const Tensor& t) {
  const std::string bytes = write_npy(t);
  return write_file_atomic(path, bytes);
}

}  // namespace onnxdbg
