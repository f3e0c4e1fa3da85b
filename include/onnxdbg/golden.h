// Golden values from a framework's dump (TensorFlow, Keras, PyTorch) fitted to a model before
// they are compared: how their keys name the model's tensors (--golden-names) and in which axis
// order their tensors are (--golden-layout), and the report of what was renamed and transposed
// (`run --json`'s "golden_mapping"). src/data/golden_match.h does the fitting.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "onnxdbg/enum_names.h"
#include "onnxdbg/options.h"
#include "onnxdbg/status.h"

namespace onnxdbg {

/// How golden keys name the model's tensors (--golden-names).
enum class GoldenNames {
  kExact,   ///< ONNX tensor names; "NAME:0" and "NAME" match each other (TensorFlow's names)
  kSuffix,  ///< also a key that ends exactly one tensor's name at a '/' (see match_golden)
};
inline constexpr EnumNames<GoldenNames, 2> kGoldenNamesNames{
    {{GoldenNames::kExact, "exact"}, {GoldenNames::kSuffix, "suffix"}}};

/// The axis order of golden tensors (--golden-layout).
enum class GoldenLayout {
  kAsIs,  ///< compared as they are
  kAuto,  ///< per rank, the permutation that fits the most tensors whose shape is not the model's
  kNhwc,  ///< channels-last: ranks 3-5 transposed to channels-first where the model's shape says so
};
inline constexpr EnumNames<GoldenLayout, 3> kGoldenLayoutNames{
    {{GoldenLayout::kAsIs, "as-is"}, {GoldenLayout::kAuto, "auto"}, {GoldenLayout::kNhwc, "nhwc"}}};

/// options.def's defaults (golden_names "exact", golden_layout "as-is").
inline constexpr GoldenNames kDefaultGoldenNames =
    enum_constant(kGoldenNamesNames, option_defaults::golden_names);
inline constexpr GoldenLayout kDefaultGoldenLayout =
    enum_constant(kGoldenLayoutNames, option_defaults::golden_layout);

/// The setting named `name`; `what` is the flag or keyword as the user wrote it
/// ("--golden-names"). Errors: kInvalidArgument "<what> 'x' is not one of exact, suffix".
Expected<GoldenNames> golden_names_from_name(std::string_view name, std::string_view what);
/// The same for --golden-layout (as-is, auto, nhwc).
Expected<GoldenLayout> golden_layout_from_name(std::string_view name, std::string_view what);
std::string_view golden_names_name(GoldenNames n);
std::string_view golden_layout_name(GoldenLayout l);

struct GoldenMatchOptions {
  GoldenNames names = kDefaultGoldenNames;
  GoldenLayout layout = kDefaultGoldenLayout;
  /// Whether anything beyond check_samples' own ":0" rule is asked for.
  bool active() const { return names != GoldenNames::kExact || layout != GoldenLayout::kAsIs; }
};

/// The permutation one tensor rank took, and the tensors it transposed.
struct GoldenPermutation {
  size_t rank = 0;
  /// numpy's transpose axes: the model's axis i is the golden tensor's axis perm[i].
  std::vector<int64_t> perm;
  std::vector<std::string> transposed;  ///< the model's tensor names, in name order
};

/// What match_golden did, for the notes and for `run --json`'s "golden_mapping".
struct GoldenMatchReport {
  GoldenMatchOptions options;
  /// Every key renamed (":0" added or dropped, or by suffix), key -> the model's tensor, in key
  /// order; with --golden-names exact only the ":0" renames (without a note, as before).
  std::vector<std::pair<std::string, std::string>> renamed;
  /// --golden-names suffix: keys that name no tensor, even by suffix (a framework's dump holds
  /// tensors the converter fused or folded away), removed from the samples; in key order.
  std::vector<std::string> dropped;
  std::vector<GoldenPermutation> permutations;  ///< ranks where a tensor was transposed, ascending
  /// auto: tensors that already have the model's shape and that their rank's permutation fits
  /// too (a shape such as 1x8x8x8): kept as they are.
  std::vector<std::string> ambiguous;
  /// Tensors whose shape is not the model's and that no permutation taken fits (auto), or that
  /// are not the channels-last form of the model's (nhwc, ranks 3-5): left as they are, and the
  /// comparison reports their shape.
  std::vector<std::string> unfit;
  /// auto/nhwc: tensors whose shape is the model's with dimensions of size 1 added or removed
  /// (TF's Mean 1x1280 against tf2onnx's GlobalAveragePool 1x1280x1x1): reshaped to it.
  std::vector<std::string> reshaped;
  /// auto/nhwc: tensors of rank 2 and more whose shape the model does not know (not declared,
  /// not inferred): left as they are.
  std::vector<std::string> unknown_shape;
  /// The sentences to print as notes (api::add_note), in order; empty when nothing was asked
  /// beyond the defaults.
  std::vector<std::string> notes;
};

}  // namespace onnxdbg
