// NVIDIA Polygraphy's JSON data files, read and written: the input lists of `polygraphy run
// --save-inputs` / `polygraphy data to-input` and the RunResults of `--save-outputs`, whose arrays
// are base64 text of np.save bytes. Follows polygraphy/json/serde.py and comparator/struct.py.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "onnxdbg/status.h"
#include "onnxdbg/tensor.h"

namespace onnxdbg {

/// One sample (Polygraphy: one iteration): tensors by name.
using Sample = std::map<std::string, Tensor>;

/// What a Polygraphy JSON file holds.
struct PolygraphyData {
  enum class Kind {
    kInputs,      ///< a list of samples (or a single sample object): `--save-inputs`, to-input
    kRunResults,  ///< {"polygraphy_class": "RunResults", "lst": [[runner, [iterations]], ...]}
  };
  Kind kind = Kind::kInputs;
  /// kInputs: one entry with an empty runner name. kRunResults: one entry per runner, in file
  /// order, each with its iterations in order.
  std::vector<std::pair<std::string, std::vector<Sample>>> runs;
};

/// Standard base64 (RFC 4648 section 4, with '=' padding), as Python's base64.b64encode.
std::string base64_encode(std::string_view bytes);
/// Decodes standard base64; whitespace is skipped. Errors: kInvalidArgument for a character
/// outside the alphabet or a length that is not a whole number of 4-character groups.
Expected<std::string> base64_decode(std::string_view text);

/// Parses the text of a Polygraphy JSON data file. Accepted encodings of one array:
///   {"array": BASE64, "polygraphy_class": "ndarray"}             (np.save bytes, read_npy; the
///                                                                 narrow types under ml_dtypes'
///                                                                 names, as write_npy writes)
///   {"array": ..., "__polygraphy_encoded_ndarray": ...}           (older Polygraphy)
///   {"values": ARRAY, "polygraphy_class": "LazyArray" | "LazyNumpyArray"}
/// and of a sample: an object mapping names to arrays; an IterationResult
/// ({"outputs": {name: array}, "runner_name": .., "polygraphy_class": "IterationResult"}).
/// The top level is a list of samples, one sample, or a RunResults object.
/// `what` names the file in messages. Errors: kInvalidArgument (not JSON, an unexpected shape,
/// bad base64, data that read_npy refuses, an empty list), kUnsupported (a polygraphy_class
/// other than those above, e.g. a torch tensor, or numpy dtypes read_npy does not handle).
Expected<PolygraphyData> parse_polygraphy_json(std::string_view text, const std::string& what);

/// Reads and parses a Polygraphy JSON file. Errors: kNotFound (unreadable), then as
/// parse_polygraphy_json naming the file.
Expected<PolygraphyData> load_polygraphy_json(const std::filesystem::path& path);

/// The JSON text Polygraphy writes for a list of samples (`polygraphy data to-input`): a list of
/// objects mapping names to {"array": base64 of write_npy, "polygraphy_class": "ndarray"}.
std::string polygraphy_inputs_json(const std::vector<Sample>& samples);

/// The JSON text of a RunResults holding `runs` (runner name -> iterations), each iteration an
/// IterationResult with LazyArray values, runtime null.
std::string polygraphy_run_results_json(
    const std::vector<std::pair<std::string, std::vector<Sample>>>& runs);

}  // namespace onnxdbg
