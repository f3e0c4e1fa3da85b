// Seeded input generation and --input-shapes / --val-range parsing.
#include "comparator/input_gen.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "core/run_limits.h"
#include "onnxdbg/narrow_types.h"

namespace onnxdbg {

namespace {

uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

uint64_t hash_name(const std::string& s) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

bool parse_double(const std::string& s, double& v) {
  char* end = nullptr;
  v = std::strtod(s.c_str(), &end);
  return !s.empty() && end == s.c_str() + s.size();
}

std::string trim_brackets(std::string s) {
  if (!s.empty() && s.front() == '[') s.erase(0, 1);
  if (!s.empty() && s.back() == ']') s.pop_back();
  return s;
}

// The smallest and largest finite values of a narrow type (float8 +-448 for E4M3FN, int4 -8..7;
// float8e8m0's smallest is 2^-127: it has no zero), from its codes.
ValueRange narrow_range(DType t) {
  ValueRange r{std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity()};
  for (unsigned code = 0; code < (1u << dtype_bits(t)); ++code) {
    const double v = narrow_to_double(t, static_cast<uint8_t>(code));
    if (!std::isfinite(v)) continue;
    r.low = std::min(r.low, v);
    r.high = std::max(r.high, v);
  }
  return r;
}

}  // namespace

Status parse_input_shapes(const std::vector<std::string>& raw, std::map<std::string, Shape>& out) {
  // Entries may also come comma-separated in one value ("x:1x3,y:1x5"; commas inside [...]
  // belong to a shape).
  std::vector<std::string> args;
  for (const auto& value : raw) {
    std::string cur;
    int depth = 0;
    for (char c : value) {
      depth += c == '[' ? 1 : c == ']' ? -1 : 0;
      if (c == ',' && depth == 0) {
        args.push_back(cur);
        cur.clear();
      } else {
        cur += c;
      }
    }
    args.push_back(cur);
  }
  for (const auto& arg : args) {
    const auto colon = arg.rfind(':');
    if (colon == std::string::npos || colon == 0)
      return invalid_argument("--input-shapes entry '" + arg +
                              "' is not NAME:SHAPE (e.g. x:1x3x224x224)");
    const std::string name = arg.substr(0, colon);
    std::string dims = arg.substr(colon + 1);
    const bool bracketed = !dims.empty() && dims.front() == '[';
    dims = trim_brackets(dims);
    Shape shape;
    const char sep = bracketed ? ',' : 'x';
    size_t pos = 0;
    while (!dims.empty() && pos <= dims.size()) {
      const size_t next = dims.find(sep, pos);
      const std::string d =
          dims.substr(pos, next == std::string::npos ? std::string::npos : next - pos);
      double v;
      if (!parse_double(d, v) || v < 0 || v != std::floor(v) || v > 9.0e15)
        return invalid_argument("--input-shapes entry '" + arg + "': '" + d +
                                "' is not a non-negative integer dimension");
      shape.push_back(static_cast<int64_t>(v));
      if (next == std::string::npos) break;
      pos = next + 1;
    }
    ODB_RETURN_IF_ERROR(
        shape_numel(shape).has_value()
            ? Status::ok()
            : invalid_argument("--input-shapes entry '" + arg + "' has too many elements"));
    out[name] = shape;
  }
  return Status::ok();
}

Status parse_value_ranges(const std::vector<std::string>& raw, InputGenOptions& out) {
  // A bare "[LOW,HIGH]" may arrive split in two ("LOW", "HIGH") by the command-line parser;
  // join consecutive lone numbers back into one range.
  std::vector<std::string> args;
  for (size_t i = 0; i < raw.size(); ++i) {
    double v;
    if (i + 1 < raw.size() && parse_double(raw[i], v) && parse_double(raw[i + 1], v)) {
      args.push_back(raw[i] + "," + raw[i + 1]);
      ++i;
    } else {
      args.push_back(raw[i]);
    }
  }
  for (const auto& arg : args) {
    std::string name, range = arg;
    const auto bracket = arg.find('[');
    const auto colon = bracket == std::string::npos ? std::string::npos : arg.rfind(':', bracket);
    if (colon != std::string::npos) {
      name = arg.substr(0, colon);
      range = arg.substr(colon + 1);
    }
    range = trim_brackets(range);
    const auto comma = range.find(',');
    ValueRange r;
    if (comma == std::string::npos || !parse_double(range.substr(0, comma), r.low) ||
        !parse_double(range.substr(comma + 1), r.high))
      return invalid_argument("--val-range entry '" + arg +
                              "' is not [LOW,HIGH] or NAME:[LOW,HIGH]");
    if (r.low > r.high)
      return invalid_argument("--val-range entry '" + arg + "' has LOW greater than HIGH");
    if (name.empty())
      out.default_range = r;
    else
      out.ranges[name] = r;
  }
  return Status::ok();
}

Expected<Shape> resolve_input_shape(const ValueSignature& sig, const InputGenOptions& options) {
  auto it = options.shapes.find(sig.name);
  if (it != options.shapes.end()) {
    const Shape& s = it->second;
    if (sig.has_shape) {
      if (s.size() != sig.shape.size())
        return invalid_argument("--input-shapes gives input '" + sig.name + "' rank " +
                                std::to_string(s.size()) + " but the model declares rank " +
                                std::to_string(sig.shape.size()));
      for (size_t d = 0; d < s.size(); ++d)
        if (sig.shape[d] >= 0 && sig.shape[d] != s[d])
          return invalid_argument("--input-shapes gives input '" + sig.name + "' size " +
                                  std::to_string(s[d]) + " on axis " + std::to_string(d) +
                                  " but the model fixes it to " + std::to_string(sig.shape[d]));
    }
    return s;
  }
  if (!sig.has_shape)
    return invalid_argument("input '" + sig.name +
                            "' has no declared shape; give it with "
                            "--input-shapes " +
                            sig.name + ":DIMS (e.g. " + sig.name + ":1x3x224x224)");
  Shape s = sig.shape;
  for (size_t d = 0; d < s.size(); ++d) {
    if (s[d] >= 0) continue;
    std::string example;
    for (size_t k = 0; k < s.size(); ++k)
      example += (k ? "x" : "") + (s[k] >= 0 ? std::to_string(s[k]) : std::string("N"));
    const std::string dim = sig.dim_params[d].empty()
                                ? "an unnamed dynamic dimension"
                                : "dynamic dimension '" + sig.dim_params[d] + "'";
    return invalid_argument("input '" + sig.name + "' has " + dim + " on axis " +
                            std::to_string(d) + "; give its size with --input-shapes " + sig.name +
                            ":" + example);
  }
  return s;
}

Expected<TensorMap> generate_inputs(const onnx::GraphProto& graph, const InputGenOptions& options) {
  const auto sigs = model_inputs(graph);
  std::set<std::string> names;
  for (const auto& s : sigs) names.insert(s.name);
  std::string known;
  for (const auto& n : names) known += (known.empty() ? "" : ", ") + n;
  for (const auto& [n, s] : options.shapes)
    if (!names.count(n))
      return invalid_argument("--input-shapes names '" + n +
                              "', which is not an input of the model (inputs: " + known + ")");
  for (const auto& [n, r] : options.ranges)
    if (!names.count(n))
      return invalid_argument("--val-range names '" + n +
                              "', which is not an input of the model (inputs: " + known + ")");

  TensorMap out;
  for (const auto& sig : sigs) {
    if (sig.dtype == DType::kUndefined)
      return unsupported("input '" + sig.name + "' is a " + sig.type_string +
                         "; only tensor inputs can be generated (use --load-inputs)");
    if (sig.dtype == DType::kString || sig.dtype == DType::kComplex64 ||
        sig.dtype == DType::kComplex128)
      return unsupported("input '" + sig.name + "' has element type " +
                         std::string(dtype_name(sig.dtype)) +
                         ", which cannot be generated (use --load-inputs)");
    ODB_ASSIGN_OR_RETURN(Shape shape, resolve_input_shape(sig, options));
    ODB_RETURN_IF_ERROR(
        check_tensor_memory("input '" + sig.name + "'", sig.dtype, shape, options.max_memory));
    auto made = Tensor::make(sig.dtype, shape);
    if (!made) return std::move(made).status().with_context("input '" + sig.name + "'");
    Tensor t = std::move(*made);
    ValueRange r =
        options.ranges.count(sig.name) ? options.ranges.at(sig.name) : options.default_range;
    const bool narrow = is_narrow_float(sig.dtype) || is_narrow_integer(sig.dtype);
    if (narrow) {
      // The range clamped to what the type holds, so that no value saturates or wraps around.
      const ValueRange type = narrow_range(sig.dtype);
      r.low = std::clamp(r.low, type.low, type.high);
      r.high = std::clamp(r.high, type.low, type.high);
    }
    uint64_t state = options.seed ^ hash_name(sig.name);
    for (int64_t i = 0; i < t.numel(); ++i) {
      const double u = static_cast<double>(splitmix64(state) >> 11) * 0x1.0p-53;  // [0, 1)
      double v;
      if (sig.dtype == DType::kBool) {
        v = u < 0.5 ? 0 : 1;
      } else if (is_integer(sig.dtype) || is_narrow_integer(sig.dtype)) {
        const double lo = std::ceil(r.low), hi = std::floor(r.high);
        v = hi < lo ? lo : lo + std::floor(u * (hi - lo + 1));
      } else {
        v = r.low + u * (r.high - r.low);
      }
      t.set_from_double(i, v);
    }
    out[sig.name] = std::move(t);
  }
  return out;
}

}  // namespace onnxdbg
