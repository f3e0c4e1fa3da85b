// BackendSpec: which backend to run and with which options, as `--backends` writes it
// ("onnxruntime:opt=disabled:threads=1"). A public vocabulary type: every API call that runs a
// model takes some (`run`, `reduce`, `surgeon`, `conformance`); src/backends/ registers the
// backends the names refer to (backends.def) and documents their options.
#pragma once

#include <map>
#include <string>

#include "onnxdbg/status.h"

namespace onnxdbg {

/// A backend name with options, as written on the command line:
/// "onnxruntime", "onnxruntime:opt=disabled", "onnxruntime:opt=basic:threads=1".
struct BackendSpec {
  std::string name;
  std::map<std::string, std::string> options;

  /// Parses NAME[:KEY=VALUE]...; errors with kInvalidArgument on an empty name or an option
  /// without '='.
  static Expected<BackendSpec> parse(const std::string& text);
  /// The canonical text form ("onnxruntime:opt=disabled:threads=1").
  std::string to_string() const;
  /// The value of option `key`, or `def`.
  std::string option(const std::string& key, const std::string& def = "") const;
};

}  // namespace onnxdbg
