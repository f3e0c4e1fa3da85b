// One way to name the values of an enum and to parse those names back: a table of {value, name}
// pairs, written once next to the enum, serves both directions and words every parse error the
// same way ("--error-stat 'x' is not one of elemwise, max, mean, median").
#pragma once

#include <array>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include "onnxdbg/status.h"

namespace onnxdbg {

/// One value of an enum and its name, as a user writes it on the command line and reads it in a
/// report.
template <class E>
struct EnumName {
  E value;
  std::string_view name;
};

/// The table of an enum: every value once, in the order its names are listed in messages.
template <class E, size_t N>
using EnumNames = std::array<EnumName<E>, N>;

/// The name of `value` in `table`; "?" for a value the table lacks (a broken invariant).
template <class E, size_t N>
std::string_view enum_name(const EnumNames<E, N>& table, E value) {
  for (const auto& e : table)
    if (e.value == value) return e.name;
  return "?";
}

/// The names of `table`, comma-separated ("elemwise, max, mean, median").
template <class E, size_t N>
std::string enum_names_list(const EnumNames<E, N>& table) {
  std::string out;
  for (const auto& e : table) {
    if (!out.empty()) out += ", ";
    out += e.name;
  }
  return out;
}

/// The value named `name` in `table`. `what` names the setting in the error, as the user wrote
/// it ("--error-stat", "accumulate="). Errors: kInvalidArgument "<what> '<name>' is not one of
/// <names>" for a name the table lacks.
template <class E, size_t N>
Expected<E> enum_from_name(const EnumNames<E, N>& table, std::string_view name,
                           std::string_view what) {
  for (const auto& e : table)
    if (e.name == name) return e.value;
  return invalid_argument(std::string(what) + " '" + std::string(name) + "' is not one of " +
                          enum_names_list(table));
}

/// The value named `name` in `table`, in a constant expression: a name the table lacks (an
/// options.def default no enum value has) fails the build there, so the default is spelled once.
template <class E, size_t N>
constexpr E enum_constant(const EnumNames<E, N>& table, std::string_view name) {
  for (const auto& e : table)
    if (e.name == name) return e.value;
  throw std::logic_error("not a name of the table");  // only ever evaluated at compile time
}

}  // namespace onnxdbg
