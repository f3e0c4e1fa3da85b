// Which tensors of a graph hold quantized values, and with which scale and zero point: read from
// the QDQ and integer ops that make or take them (ONNX operator specs QuantizeLinear,
// DequantizeLinear, DynamicQuantizeLinear, QLinearConv, QLinearMatMul). For `inspect
// --show-tensors` now, and for comparing quantized tensors dequantized (issue 19 item 3).
#pragma once

#include <map>
#include <optional>
#include <string>

#include "core/onnx.h"
#include "onnxdbg/model_summary.h"

namespace onnxdbg {

/// The quantized tensors of `graph` (main graph only, not subgraphs) by name: outputs of
/// QuantizeLinear and DynamicQuantizeLinear, input 0 of DequantizeLinear, the quantized inputs
/// and output of QLinearConv and QLinearMatMul. A tensor several ops describe keeps the first
/// in node order. Never fails: what cannot be read is left unset.
std::map<std::string, QuantParams> quantized_tensors(const onnx::GraphProto& graph);

/// "scale 0.0078, zero point 128", "per-axis scale [64], zero point 'zp'", "scale computed
/// (DynamicQuantizeLinear)": one short phrase for tables.
std::string quant_params_text(const QuantParams& q);

}  // namespace onnxdbg
