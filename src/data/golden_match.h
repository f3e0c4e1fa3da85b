// Golden values from a framework's dump (TensorFlow, Keras) fitted to the model before they are
// checked (check_samples): keys renamed to the model's tensor names by their '/'-separated
// suffix (--golden-names suffix), and tensors transposed to the model's axis order
// (--golden-layout auto|nhwc: TensorFlow's NHWC values against tf2onnx's NCHW tensors).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/onnx.h"
#include "data/polygraphy_json.h"
#include "onnxdbg/golden.h"
#include "onnxdbg/status.h"

namespace onnxdbg {

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
