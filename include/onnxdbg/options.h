// The option schema: every option the CLI and the Python package share, declared once in
// include/onnxdbg/options.def. Its typed defaults are what the API's option structs start from
// (option_defaults::atol, ...); its rows give each front-end the flag or keyword, the help, the
// default as text, the unit and the Polygraphy flag of the same meaning.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace onnxdbg {

/// The default of every option of options.def, typed as the API holds it (a text option's
/// default is its text: backends "reference,onnxruntime", layerwise_memory "2GiB").
namespace option_defaults {
#define ODB_OPTION(group, id, type, value, cli, python, python_default, polygraphy, unit, help) \
  inline constexpr type id = value;
#include "onnxdbg/options.def"
#undef ODB_OPTION
}  // namespace option_defaults

/// One row of options.def.
struct OptionSpec {
  std::string_view group;           ///< inputs | comparison | backends | limits | layerwise | ...
  std::string_view id;              ///< option_defaults::<id>
  std::string_view type;            ///< its C++ type: double, int, uint64_t, bool, std::string_view
  std::string_view cli;             ///< the flag, "--seed"
  std::string_view python;          ///< the keyword of onnxdbg.compare/reduce; "" when none
  std::string default_text;         ///< the default as the CLI writes it ("1e-05", "true", "")
  std::string_view python_default;  ///< Python's default where it differs on purpose ("None")
  std::string_view polygraphy;      ///< Polygraphy's flag of the same meaning; "" when none
  std::string_view unit;            ///< "seconds", "bytes", ...; "" for none
  std::string_view help;            ///< the CLI's help
};

/// Every row of options.def, in its order.
const std::vector<OptionSpec>& option_schema();

/// The row of option `id`. A name options.def lacks is a programming error: it aborts, naming
/// it (every caller passes a literal that tests/unit/api/options_test.cpp walks).
const OptionSpec& option_spec(std::string_view id);

}  // namespace onnxdbg
