// inline_taken_branches: a model with each If replaced by the branch it takes on given inputs, so
// that every value computed inside those branches is a value of the main graph, which backends can
// be asked for as graph outputs (the layerwise pass inside If branches, issue 18).
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "core/status.h"
#include "core/tensor.h"
#include "reference/interpreter.h"

namespace onnxdbg::surgeon {

/// One If replaced by the branch it took.
struct TakenBranch {
  /// The If's name as the main graph held it when it was replaced: its own name, or for an If
  /// inside a branch inlined before it, "<outer If>/<branch>/<name>" (surgeon::inline_if_branch).
  std::string node;
  std::string op_type = "If";
  bool then_branch = true;  ///< the condition was true
  int depth = 0;            ///< 0: an If of the main graph; 1: inside one inlined branch; ...
};

struct TakenBranches {
  onnx::ModelProto model;          ///< the model with the Ifs replaced
  std::vector<TakenBranch> taken;  ///< in the order they were replaced (outer Ifs first)
  /// Ifs left in place because this many levels of nesting were inlined already
  /// (kMaxInlinedIfDepth); 0 normally.
  int left_nested = 0;
};

/// Levels of nested Ifs inline_taken_branches replaces at most (one reference run each).
inline constexpr int kMaxInlinedIfDepth = 16;

/// The model with every If of its main graph replaced by the branch it takes on `inputs`
/// (surgeon::inline_if_branch), the Ifs of an inlined branch too, level by level: each level is
/// one reference run (on `options`, external data resolved against `base_dir`) that stops before
/// the last If of the main graph and reads every If's condition (ONNX If-1..21: a single-element
/// tensor, true when not zero). The result computes the same values as the model on these inputs
/// (and only on inputs that take the same branches); the Ifs' outputs keep their names, as do the
/// branches' values unless the main graph already uses the name (then "<name>_<branch>_<k>").
/// Ifs inside Loop or Scan bodies stay. A model without an If comes back as it is, with no
/// reference run. Errors: the reference's (kUnsupported for an op it cannot run, kInvalidArgument
/// for inputs that do not fit, kModelError), kModelError for a condition that is not a single
/// element or a malformed If, each naming the If.
Expected<TakenBranches> inline_taken_branches(const onnx::ModelProto& model,
                                              const std::filesystem::path& base_dir,
                                              const std::map<std::string, Tensor>& inputs,
                                              const reference::InterpreterOptions& options = {});

}  // namespace onnxdbg::surgeon
