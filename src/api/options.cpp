// The option schema (include/onnxdbg/options.h): options.def's rows, with each default written
// as the CLI writes it.
#include "onnxdbg/options.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "core/run_limits.h"

namespace onnxdbg {

namespace {

// A default as the CLI writes it: numbers as %g (1e-05), booleans as true/false, sizes in unit
// bytes as memory sizes without the space (2GiB), texts as they are.
std::string default_text(double v, std::string_view) { return fmt::format("{:g}", v); }
std::string default_text(int v, std::string_view) { return std::to_string(v); }
std::string default_text(bool v, std::string_view) { return v ? "true" : "false"; }
std::string default_text(std::string_view v, std::string_view) { return std::string(v); }
std::string default_text(uint64_t v, std::string_view unit) {
  if (unit != "bytes") return std::to_string(v);
  std::string s = memory_size_string(v);
  s.erase(std::remove(s.begin(), s.end(), ' '), s.end());
  return s;
}

}  // namespace

const std::vector<OptionSpec>& option_schema() {
  static const std::vector<OptionSpec> rows = {
#define ODB_OPTION(group, id, type, value, cli, python, python_default, polygraphy, unit, help) \
  {#group,         #id,        #type, cli, python, default_text(option_defaults::id, unit),     \
   python_default, polygraphy, unit,  help},
#include "onnxdbg/options.def"
#undef ODB_OPTION
  };
  return rows;
}

const OptionSpec& option_spec(std::string_view id) {
  for (const auto& row : option_schema())
    if (row.id == id) return row;
  std::fprintf(stderr, "onnxdbg: internal error: option '%.*s' is not in options.def\n",
               static_cast<int>(id.size()), id.data());
  std::abort();
}

}  // namespace onnxdbg
