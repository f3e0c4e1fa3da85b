// onnxdbg::api::data_to_input: `onnxdbg data to-input` (Polygraphy's `polygraphy data to-input`):
// input and output data files merged into one file that `run --load-inputs` reads.
#pragma once

#include <cstddef>
#include <filesystem>
#include <vector>

#include "onnxdbg/common.h"

namespace onnxdbg::api {

struct DataToInputOptions {
  /// Data files, in order (.npz, Polygraphy JSON inputs or RunResults, test_data_set folders,
  /// named .pb): sample k of the result holds sample k of every file; later files win on equal
  /// names (data/samples.h, merge_sample_files).
  std::vector<std::filesystem::path> paths;
  /// The merged file: .json (Polygraphy's input list, any number of samples) or .npz (one).
  std::filesystem::path output;
  /// When set, every merged tensor must be a tensor of this model (a graph input or a node
  /// output); other backends' outputs saved as BACKEND/OUTPUT by `run --save-outputs` are left
  /// out with a note.
  std::filesystem::path model;
};

struct DataToInputResult {
  size_t samples = 0;  ///< samples written
  size_t tensors = 0;  ///< tensors written, over all samples
  Messages messages;   ///< the note on BACKEND/OUTPUT tensors left out
};

/// Merges options.paths and writes options.output (atomically; nothing is written on an error).
/// Errors: those of the data readers and writers (kNotFound, kInvalidArgument for a malformed
/// file or an output path whose format holds fewer samples) and of load_model; kInvalidArgument
/// naming a merged tensor that is not a tensor of options.model.
Expected<DataToInputResult> data_to_input(const DataToInputOptions& options);

}  // namespace onnxdbg::api
