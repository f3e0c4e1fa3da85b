// Data users bring, as samples for one model: inputs for --load-inputs, golden outputs (graph
// outputs and, optionally, intermediate tensors) for --load-outputs, from .npz, Polygraphy JSON,
// ONNX test-data folders, or one .pb/.npy file; checked against the model before anything runs.
// Also the merge behind `onnxdbg data to-input` (Polygraphy's `polygraphy data to-input`).
#pragma once

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "core/onnx.h"
#include "data/polygraphy_json.h"
#include "onnxdbg/status.h"

namespace onnxdbg {

/// What the data is for; decides which names are valid.
enum class DataRole {
  kInputs,   ///< graph inputs without an initializer
  kOutputs,  ///< any value of the main graph (graph outputs and intermediate tensors)
};

/// Samples read from one file or folder, before checking them against a model.
struct LoadedSamples {
  std::vector<Sample> samples;  ///< at least one
  std::string note;  ///< e.g. "RunResults of 2 runners; using the first, 'onnxrt-runner'"
};

/// Reads samples from `path`, deciding by what it is:
///   a folder holding test_data_set_N folders -> one sample per folder, by N (numerically)
///   any other folder                         -> one sample (input_K.pb or, for kOutputs,
///                                               output_K.pb; see test_data.h)
///   NAME.json                                -> Polygraphy JSON (parse_polygraphy_json): a list
///                                               of samples, or RunResults, of which the first
///                                               runner's iterations (kOutputs only)
///   NAME.npz                                 -> one sample (load_npz)
///   NAME.pb / NAME.npy                       -> one sample of one tensor; an unnamed one takes
///                                               the name of the model's only input (kInputs)
///                                               or only output (kOutputs)
/// Errors: kNotFound (missing path), kInvalidArgument (another extension, RunResults given as
/// inputs, an unnamed single tensor for a model with several inputs/outputs, a folder without
/// data files), and those of the readers named above; each message names the path.
Expected<LoadedSamples> load_samples(const std::filesystem::path& path,
                                     const onnx::GraphProto& graph, DataRole role);

/// Every value name of the model file: graph inputs, initializers and node outputs of the main
/// graph and of every If branch and Loop/Scan body, nested ones too (the names golden values
/// may use: the layerwise comparison compares the branches that ran).
std::set<std::string> model_values(const onnx::GraphProto& graph);

/// Checks `samples` (read from `what`) against `graph` so that data of another model is refused
/// before anything runs. kInputs: every graph input without initializer is present in every
/// sample; other names (intermediate tensors of a file merged by `polygraphy data to-input`, say)
/// are dropped from a sample holding every input, as Polygraphy ignores them, and `note` (when
/// given) says so, naming them (the first 8); a sample lacking an input and holding such a name
/// is refused naming that name (the data of another model). kOutputs: every name is a value of
/// some graph of the model (graph input, initializer, node output; If branches and Loop/Scan
/// bodies included); a TensorFlow-style name that is not one but is with ":0" added or removed
/// (TensorFlow names tensors "name:0"; tf2onnx keeps the suffix or drops it) is renamed to the
/// model's; entries named "BACKEND/NAME" where NAME is a graph output (other backends' outputs, as
/// `onnxdbg run --save-outputs` writes them) are dropped; each sample must hold at least one graph
/// output. Both: a tensor of a graph input/output must
/// have its declared element type and static dimensions. Errors: kInvalidArgument with one sentence
/// naming the file, the tensor and the model's names
/// ("... was it saved from another model?").
Status check_samples(std::vector<Sample>& samples, const onnx::GraphProto& graph, DataRole role,
                     const std::string& what, std::string* note = nullptr);

/// Merges data files like `polygraphy data to-input`: sample k of the result holds the tensors
/// of sample k of every file, later files overwriting earlier ones on equal names; every
/// runner's iterations of a RunResults count as a file of their own. Unlike Polygraphy, files
/// with different sample counts are an error, not a warning with incomplete samples.
/// Files are read by extension as load_samples, with no model: .json, .npz, test_data_set
/// folders (named by the protos' name fields), named .pb files.
/// Errors: kInvalidArgument naming the file whose sample count differs, or an unnamed tensor;
/// those of the readers.
Expected<std::vector<Sample>> merge_sample_files(const std::vector<std::filesystem::path>& paths);

/// Writes samples to `path` (replacing it, through a temporary file, so a failure leaves no
/// partial file): NAME.npz for one sample, NAME.json (Polygraphy's input-list format) for any
/// number. Errors: kInvalidArgument for another extension, several samples for .npz, or a file
/// that cannot be written.
Status save_samples(const std::filesystem::path& path, const std::vector<Sample>& samples);

}  // namespace onnxdbg
