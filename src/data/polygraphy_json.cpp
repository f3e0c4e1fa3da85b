// Polygraphy's JSON data files (see polygraphy_json.h): base64, the array / sample / RunResults
// encodings, and writers producing what Polygraphy itself writes.
#include "data/polygraphy_json.h"

#include <fmt/format.h>

#include <array>
#include <nlohmann/json.hpp>

#include "data/npy.h"

namespace onnxdbg {
namespace {

using nlohmann::json;
constexpr const char* kMarker = "polygraphy_class";
constexpr const char* kLegacyPrefix = "__polygraphy_encoded_";
constexpr const char kAlphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// The Polygraphy type of an encoded object: its polygraphy_class, or the suffix of an older
/// "__polygraphy_encoded_<type>" key; "" for a plain object.
std::string type_of(const json& j) {
  if (!j.is_object()) return "";
  if (auto it = j.find(kMarker); it != j.end() && it->is_string()) return it->get<std::string>();
  for (const auto& [key, value] : j.items()) {
    if (key.rfind(kLegacyPrefix, 0) == 0) return key.substr(std::string(kLegacyPrefix).size());
  }
  return "";
}

bool is_array_type(const std::string& t) {
  return t == "ndarray" || t == "LazyArray" || t == "LazyNumpyArray";
}

Expected<Tensor> decode_array(const json& j, const std::string& where) {
  const std::string t = type_of(j);
  if (t == "LazyArray" || t == "LazyNumpyArray") {
    if (!j.contains("values"))
      return invalid_argument(where + " is a " + t + " without \"values\"");
    return decode_array(j.at("values"), where);
  }
  if (t != "ndarray") {
    if (t.empty())
      return invalid_argument(where + " is not an encoded array (no \"polygraphy_class\")");
    return unsupported(where + " is a Polygraphy '" + t +
                       "', which onnxdbg does not read (only numpy arrays)");
  }
  auto it = j.find("array");
  if (it == j.end() || !it->is_string())
    return invalid_argument(where + " has no \"array\" string");
  auto bytes = base64_decode(it->get<std::string>());
  if (!bytes) {
    // Polygraphy before base64 stored the bytes as latin-1 text; it falls back the same way.
    std::string latin1;
    bool narrow = true;
    const std::string& s = it->get_ref<const std::string&>();
    for (size_t i = 0; i < s.size() && narrow; ++i) {
      const unsigned char c = static_cast<unsigned char>(s[i]);
      if (c < 0x80) {
        latin1 += static_cast<char>(c);
      } else if ((c == 0xC2 || c == 0xC3) && i + 1 < s.size()) {
        latin1 +=
            static_cast<char>(((c & 0x03) << 6) | (static_cast<unsigned char>(s[++i]) & 0x3F));
      } else {
        narrow = false;
      }
    }
    if (!narrow || latin1.rfind("\x93NUMPY", 0) != 0)
      return invalid_argument(where + ": " + bytes.status().message());
    bytes = std::move(latin1);
  }
  return read_npy(*bytes, where);
}

Expected<Sample> decode_sample(const json& j, const std::string& where) {
  const std::string t = type_of(j);
  if (t == "IterationResult") {
    if (!j.contains("outputs") || !j.at("outputs").is_object())
      return invalid_argument(where + " is an IterationResult without \"outputs\"");
    return decode_sample(j.at("outputs"), where);
  }
  if (!t.empty() && t != "OrderedDict" && t != "dict")
    return invalid_argument(where + " is a Polygraphy '" + t + "', not a set of named arrays");
  if (!j.is_object()) return invalid_argument(where + " is not an object of named arrays");
  Sample s;
  for (const auto& [name, value] : j.items()) {
    if (name == kMarker || name.rfind(kLegacyPrefix, 0) == 0) continue;
    ODB_ASSIGN_OR_RETURN(Tensor tensor,
                         decode_array(value, fmt::format("{} tensor '{}'", where, name)));
    s.emplace(name, std::move(tensor));
  }
  return s;
}

json encode_array(const Tensor& t) {
  return {{"array", base64_encode(write_npy(t))}, {kMarker, "ndarray"}};
}

json encode_sample(const Sample& s) {
  json j = json::object();
  for (const auto& [name, t] : s) j[name] = encode_array(t);
  return j;
}

}  // namespace

std::string base64_encode(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    const uint32_t v = (static_cast<uint8_t>(bytes[i]) << 16) |
                       (static_cast<uint8_t>(bytes[i + 1]) << 8) |
                       static_cast<uint8_t>(bytes[i + 2]);
    for (int k = 3; k >= 0; --k) out += kAlphabet[(v >> (6 * k)) & 63];
  }
  const size_t rest = bytes.size() - i;
  if (rest) {
    uint32_t v = static_cast<uint8_t>(bytes[i]) << 16;
    if (rest == 2) v |= static_cast<uint8_t>(bytes[i + 1]) << 8;
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += rest == 2 ? kAlphabet[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

Expected<std::string> base64_decode(std::string_view text) {
  std::array<int, 256> value;
  value.fill(-1);
  for (int k = 0; k < 64; ++k) value[static_cast<unsigned char>(kAlphabet[k])] = k;
  std::string out;
  out.reserve(text.size() / 4 * 3);
  uint32_t acc = 0;
  int have = 0, pad = 0;
  bool padded = false;  // a padded quantum ended the data
  for (const char c : text) {
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
    if (padded) return invalid_argument("invalid base64: data after the padding");
    if (c == '=') {
      ++pad;
      ++have;
    } else {
      const int v = value[static_cast<unsigned char>(c)];
      if (v < 0 || pad)
        return invalid_argument(fmt::format("invalid base64: unexpected character '{}'", c));
      acc = (acc << 6) | static_cast<uint32_t>(v);
      ++have;
    }
    if (have == 4) {
      acc <<= 6 * pad;
      out += static_cast<char>((acc >> 16) & 0xFF);
      if (pad < 2) out += static_cast<char>((acc >> 8) & 0xFF);
      if (pad < 1) out += static_cast<char>(acc & 0xFF);
      if (pad > 2) return invalid_argument("invalid base64: too much padding");
      acc = 0;
      have = 0;
      padded = pad > 0;  // nothing may follow the padding
    }
  }
  if (have) return invalid_argument("invalid base64: length is not a multiple of 4");
  return out;
}

Expected<PolygraphyData> parse_polygraphy_json(std::string_view text, const std::string& what) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return invalid_argument(what + " is not valid JSON");
  PolygraphyData data;
  if (type_of(j) == "RunResults") {
    data.kind = PolygraphyData::Kind::kRunResults;
    if (!j.contains("lst") || !j.at("lst").is_array())
      return invalid_argument(what + " is a RunResults without a \"lst\" list");
    for (const auto& entry : j.at("lst")) {
      if (!entry.is_array() || entry.size() != 2 || !entry[0].is_string() || !entry[1].is_array())
        return invalid_argument(what + ": a RunResults entry is not [runner name, [iterations]]");
      const std::string runner = entry[0].get<std::string>();
      std::vector<Sample> iterations;
      for (size_t i = 0; i < entry[1].size(); ++i) {
        ODB_ASSIGN_OR_RETURN(
            Sample s, decode_sample(entry[1][i],
                                    fmt::format("{} runner '{}' iteration {}", what, runner, i)));
        iterations.push_back(std::move(s));
      }
      data.runs.emplace_back(runner, std::move(iterations));
    }
    if (data.runs.empty()) return invalid_argument(what + " is a RunResults with no runner");
    return data;
  }
  std::vector<Sample> samples;
  if (j.is_array()) {
    for (size_t i = 0; i < j.size(); ++i) {
      ODB_ASSIGN_OR_RETURN(Sample s, decode_sample(j[i], fmt::format("{} sample {}", what, i)));
      samples.push_back(std::move(s));
    }
    if (samples.empty()) return invalid_argument(what + " holds an empty list of samples");
  } else if (j.is_object() && !is_array_type(type_of(j))) {
    ODB_ASSIGN_OR_RETURN(Sample s, decode_sample(j, what));
    samples.push_back(std::move(s));
  } else {
    return invalid_argument(what +
                            " is neither a list of samples, a sample, nor Polygraphy RunResults");
  }
  data.runs.emplace_back("", std::move(samples));
  return data;
}

Expected<PolygraphyData> load_polygraphy_json(const std::filesystem::path& path) {
  ODB_ASSIGN_OR_RETURN(std::string text, read_file_bytes(path));
  return parse_polygraphy_json(text, "'" + path.string() + "'");
}

std::string polygraphy_inputs_json(const std::vector<Sample>& samples) {
  json j = json::array();
  for (const auto& s : samples) j.push_back(encode_sample(s));
  return j.dump(4);
}

std::string polygraphy_run_results_json(
    const std::vector<std::pair<std::string, std::vector<Sample>>>& runs) {
  json lst = json::array();
  for (const auto& [runner, iterations] : runs) {
    json its = json::array();
    for (const auto& s : iterations) {
      json outputs = json::object();
      for (const auto& [name, t] : s)
        outputs[name] = {{"values", encode_array(t)}, {kMarker, "LazyArray"}};
      its.push_back({{"outputs", outputs},
                     {"runtime", nullptr},
                     {"runner_name", runner},
                     {kMarker, "IterationResult"}});
    }
    lst.push_back({runner, its});
  }
  return json{{"lst", lst}, {kMarker, "RunResults"}}.dump(4);
}

}  // namespace onnxdbg
