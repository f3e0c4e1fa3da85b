// BackendSpec: which backend to run and with which options, as `--backends` writes it
// ("onnxruntime:opt=disabled:threads=1"), and the documentation of every backend and its options
// (what `--help` lists and the specs are checked against). A public vocabulary type: every API
// call that runs a model takes some (`run`, `reduce`, `surgeon`, `conformance`); src/backends/
// registers the backends the names refer to (backends.def) and documents their options.
#pragma once

#include <map>
#include <string>
#include <vector>

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

/// Options every backend accepts, for --help and validation.
struct BackendOptionDoc {
  std::string key;
  std::string values;
  std::string help;
};
/// What callers must know a backend does beyond load and run, declared with its documentation
/// (its registration: <name>_backend_doc(), listed by backends.def), so that no caller tests a
/// backend's name. Abilities that come with an option are read from the options instead
/// (BackendDoc::has_option: arena=, optimized_model=, max_memory=, list_transformers=).
struct BackendTraits {
  /// Intermediate tensors are read by layer name from one whole-model session
  /// (Session::run_observing), not asked for as extra graph outputs, and their dims may be the
  /// engine's own (OpenCV DNN drops or merges some).
  bool observes_by_layer_name = false;
  /// Why a precision=fp16 run of this backend computes float16 tensors in float32, as a
  /// parenthetical (" (...)"), or "" when onnxdbg knows no reason.
  std::string float32_compute_reason;
};

/// Names of all backends and their options (for `onnxdbg run --help` and `onnxdbg backends`).
struct BackendDoc {
  std::string name;
  std::string help;
  bool isolated;  ///< runs in a worker process (set from backends.def)
  std::vector<BackendOptionDoc> options;
  BackendTraits traits;
  /// Whether the backend documents option `key` (exactly; "config.KEY" families aside).
  bool has_option(const std::string& key) const;
};
/// Every backend of src/backends/backends.def, in its order.
const std::vector<BackendDoc>& backend_docs();
/// The documentation of backend `name`, or nullptr for a name backends.def does not list.
const BackendDoc* find_backend_doc(const std::string& name);
/// Whether backend `name` documents option `key` (false for an unknown backend): how callers
/// ask whether a backend has an ability that comes with an option (arena=, max_memory=, ...).
bool backend_has_option(const std::string& name, const std::string& key);
/// The traits of backend `name` (all false/empty for an unknown one).
const BackendTraits& backend_traits(const std::string& name);

/// Checks `spec`'s options against backend_docs(), onnxruntime's providers= names
/// (parse_provider_list), and precision=fp32|fp16, which every backend accepts (the caller
/// converts the model; see comparator/precision.h). Errors: kInvalidArgument naming the option.
Status validate_backend_spec(const BackendSpec& spec);

/// Parses --backends: a comma-separated list of BackendSpec texts, each validated. An item that
/// is not a backend name and has no ':' continues the previous item's providers= value when
/// that was its last option, so "reference,onnxruntime:providers=cuda,cpu" is two backends, the
/// second with providers=cuda,cpu ('+' separates providers too: providers=cuda+cpu). Empty items
/// are skipped. Errors: kInvalidArgument for an empty list, a malformed item, an unknown backend or
/// option (from BackendSpec::parse and validate_backend_spec).
Expected<std::vector<BackendSpec>> parse_backend_list(const std::string& list);

}  // namespace onnxdbg
