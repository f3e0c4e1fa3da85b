// The jobs of a batch: its commands (which onnxdbg commands it runs and what it adds to them), its
// models (files, folders, list files) and each job's cache key (the model's bytes, the command,
// the options and onnxdbg's version, hashed with SHA-256).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "onnxdbg/status.h"

namespace onnxdbg::batch {

/// What batch knows of one onnxdbg command it can run per model.
struct CommandTraits {
  std::string_view name;
  bool takes_inputs;  ///< has the inputs options (--input-shapes, ...): a model's list options go
                      ///< here
  bool writes_page;   ///< takes --html FILE
  bool writes_model;  ///< needs -o FILE (reduce): batch gives it one in the job's folder
  /// The flag of a folder the command writes into the current one by default (run's
  /// --save-repro): batch points it into the job's folder unless the command gives it; "" none.
  std::string_view files_flag;
};

/// The traits of command `name`; nullptr when batch does not run it.
const CommandTraits* find_command(std::string_view name);
/// "run, lint, inspect, reduce and bisect-optimizers", for messages.
std::string command_names();

/// Splits `text` into words as a POSIX shell does (blanks separate words; '...' and "..." quote;
/// a backslash escapes the next character, inside "..." only before $ ` " \ or a newline), with
/// no expansion. Errors: kInvalidArgument for an unterminated quote or a trailing backslash.
Expected<std::vector<std::string>> split_command_line(std::string_view text);

/// One command of the batch, as given and split.
struct Command {
  std::string text;               ///< as given, trimmed
  std::vector<std::string> args;  ///< its words after the command's name
  const CommandTraits* traits = nullptr;
};

/// Parses "run --backends reference,onnxruntime --layerwise". Errors: kInvalidArgument for an
/// empty text, a command batch does not run, or one that gives --json, --html or -o/--output
/// (batch gives each job its own), naming the command.
Expected<Command> parse_command(std::string_view text);

/// One model of the batch.
struct ModelEntry {
  std::string path;               ///< as found: a folder's entries under it, a list's resolved
  std::vector<std::string> args;  ///< options from a list file's line
  std::string problem;            ///< why it cannot run ("no such file"); "" when it can
};

/// Expands `inputs`: a folder into its *.onnx files (recursively, in path order, leaving out the
/// folder `skip`, the report's own), a list file (any file not ending .onnx that is valid text)
/// into its lines (a line naming a folder into the folder's models, each with the line's
/// options), a file into itself. A path that does not exist is an entry with a problem,
/// as is a list file line whose options do not split. Errors: kInvalidArgument when a list file
/// cannot be read or a folder cannot be searched.
Expected<std::vector<ModelEntry>> find_models(const std::vector<std::string>& inputs,
                                              const std::filesystem::path& skip);

/// The lowercase hex SHA-256 of `bytes`.
std::string sha256_hex(std::string_view bytes);

/// What model_digest read.
struct ModelDigest {
  std::string sha256;          ///< lowercase hex
  bool external_data = false;  ///< the model names external data files (they were hashed too)
  uint64_t bytes = 0;          ///< the model file's size
};

/// The SHA-256 of a model's content: the file's bytes and, when the file parses as a model
/// with tensors in external data files, each such file's name and bytes in the order the graph
/// first names them (a changed weights file is a changed model). Streamed, 1 MiB at a time.
/// Errors: kNotFound / kInvalidArgument naming the file that cannot be read.
Expected<ModelDigest> model_digest(const std::filesystem::path& model);

/// The cache key of one job: SHA-256 of onnxdbg's version, the model's digest, the command's
/// name and words, the model's list options, the job timeout and memory limit. Equal keys mean
/// the same job; anything that can change its answer changes the key.
std::string job_key(std::string_view model_digest, const Command& command,
                    const std::vector<std::string>& model_args, double timeout,
                    uint64_t max_memory);

/// onnxdbg's version ("0.1.0"), part of every key.
std::string_view onnxdbg_version();

}  // namespace onnxdbg::batch
