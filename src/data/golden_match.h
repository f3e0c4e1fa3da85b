// Golden values from a framework's dump (TensorFlow, Keras) fitted to the model before they are
// checked (check_samples): keys renamed to the model's tensor names by their '/'-separated
// suffix (--golden-names suffix), and tensors transposed to the model's axis order
// (--golden-layout auto|nhwc: TensorFlow's NHWC values against tf2onnx's NCHW tensors).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/enum_names.h"
#include "core/onnx.h"
#include "data/polygraphy_json.h"
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

/// The value named `name` in `table`, in a constant expression: a name the table lacks (an
/// options.def default no enum value has) fails the build there, so the default is spelled once.
template <class E, size_t N>
constexpr E enum_constant(const EnumNames<E, N>& table, std::string_view name) {
  for (const auto& e : table)
    if (e.name == name) return e.value;
  throw std::logic_error("not a name of the table");  // only ever evaluated at compile time
}

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

/// Fits every sample of golden values (read from `what`, e.g. "'golden.npz'") to `model` before
/// check_samples checks them. Names first: a key that is no value of any graph of the model
/// (graph inputs, initializers, node outputs; If/Loop/Scan bodies included) is renamed to the
/// model's "KEY:0" or, for "NAME:0", "NAME" when that is one; with GoldenNames::kSuffix, else to
/// the one value whose name, ":0" dropped from both and split at '/', ends with the key's parts:
/// first with each part equal, and where none does, with the key's scopes (every part but the
/// last) also matching the model's numbered by the converter ("block_3" matching "block_3_1", as
/// Keras 3 and tf2onnx number scopes); keys that check_samples drops (BACKEND/OUTPUT) are left
/// for it, and keys matching nothing are left for it with kExact (which refuses them) and
/// dropped with kSuffix (`dropped`: a dump holds what the converter fused away; a sample left
/// without a graph output is still refused by check_samples). Then the layout (GoldenLayout), each
/// tensor of rank 2 or more that names a value (the others are check_samples') against the model's
/// shape of that value: the declared shape of a graph input or output, an initializer's dims, else
/// ONNX shape inference (infer_shapes), else a declared value_info (a dimension without a value
/// matches any, except one a permutation moves). auto: a tensor of the model's shape is kept; for
/// the others each rank takes the permutation (not the identity) of the converter's Transposes
/// after the graph inputs (and, inverted, before its outputs: tf2onnx's NHWC -> NCHW), else the one
/// that fits the most of them, ties going to channels-last-to-first (0,r-1,1,...), then
/// channels-first-to-last, then the smallest; it transposes those it fits (ranks over 6 try only
/// those two); a tensor that fits both its shape as it is and the permutation (1x8x8x8) is
/// transposed when the converter's Transposes gave the permutation (unless it is a graph input or
/// output, or a Transpose back made it), else kept. Both: a tensor no permutation fits whose shape
/// is the model's with dimensions of size 1 added or removed (every model dimension known) is
/// reshaped to it (`reshaped`). nhwc: every tensor of rank 3-5 whose model shape is its
/// channels-first permutation (0,r-1,1,...,r-2) is transposed (a square one such as 1x8x8x8 too).
/// Transposing allocates one tensor of the same size (transpose_axes) and replaces the entry; other
/// samples are decided alike. Errors: kInvalidArgument, one sentence naming `what` and the key, for
/// a key that ends several values' names (the first few named), and for two keys naming the same
/// tensor; those of transpose_axes.
Expected<GoldenMatchReport> match_golden(std::vector<Sample>& samples,
                                         const onnx::ModelProto& model,
                                         const GoldenMatchOptions& options,
                                         const std::string& what);

/// For an error about golden values `samples` (read from `what`) that the model refused with
/// `used`: what the other settings would have done, as a clause to append to the error, or ""
/// when they would do nothing. With GoldenNames::kExact, the keys that are no value but end
/// exactly one value's name ("--golden-names suffix would rename 5 keys ... ('k' -> 't', ...)");
/// with GoldenLayout::kAsIs, the tensors GoldenLayout::kAuto would transpose ("--golden-layout
/// auto would transpose 4 tensors whose shape is the model's with its axes permuted (rank 4 by
/// (0,3,1,2): ...)"). Reads keys and shapes only; runs shape inference when a layout clause is
/// possible. Never fails.
std::string golden_hint(const std::vector<Sample>& samples, const onnx::ModelProto& model,
                        const GoldenMatchOptions& used);

}  // namespace onnxdbg
