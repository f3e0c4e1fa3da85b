// Reduced precision on a backend (`--backends onnxruntime:precision=fp16`): the model converted
// to float16 with the surgeon before that backend loads it, and the nodes whose float32 values
// exceed float16's range (65504), found by one reference run before any float16 backend runs.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "backends/backend.h"
#include "model/model.h"
#include "onnxdbg/run_report.h"
#include "onnxdbg/status.h"

namespace onnxdbg {

/// The largest finite float16 value; float32 values beyond it become +-inf in float16.
constexpr double kFloat16Max = 65504.0;

/// Largest relative rounding error of float16 (2^-11, its unit roundoff): a value converted from
/// float32 may be off by this fraction of itself, before any arithmetic.
constexpr double kFloat16RelativeRounding = 0.00048828125;

/// The precision a spec asks for: its `precision` option, "fp32" when absent.
/// Errors: kInvalidArgument for a value other than fp32 or fp16.
Expected<std::string> spec_precision(const BackendSpec& spec);

/// `spec` without its precision option (what the backend itself is created from).
BackendSpec without_precision(const BackendSpec& spec);

/// Converts `model` in place as a precision=fp16 backend runs it: surgeon::to_fp16 (weights and
/// activations to float16) with graph inputs and outputs kept float32 and Casts inside, so
/// float32 data feeds it and its outputs come back as float16 values widened to float32.
/// External initializers are read through `base_dir`. Returns how many Casts it inserted.
/// Errors: those of to_fp16, with "while converting to float16".
Expected<int64_t> convert_model_to_fp16(onnx::ModelProto& model,
                                        const std::filesystem::path& base_dir);

/// Converts `model` to float16 (surgeon to_fp16: weights and activations, graph inputs and
/// outputs kept float32 with Casts inside, so the same inputs feed it and its outputs compare
/// with float32 ones) and writes it to `path`. External initializers are read through `base_dir`
/// and stay there: the result (the converted protobuf, `path`, `base_dir`) is what a backend
/// loads (Backend::load(const LoadedModel&)). Errors: those of to_fp16 and save_model, with
/// "while converting to float16".
Expected<LoadedModel> write_fp16_model(const onnx::ModelProto& model,
                                       const std::filesystem::path& base_dir,
                                       const std::filesystem::path& path);

/// Whether a float32 tensor holds a value that is not a float16 value widened to float32: one
/// with a bit set among the 13 low mantissa bits float16 lacks (a widened float16 value, normal
/// or subnormal, inf or NaN, has them clear; NaN payloads aside). A precision=fp16 backend whose
/// outputs hold such values computed them in float32 (ONNX Runtime's CPU provider does so for
/// ops without a float16 kernel, dropping the float16 round trips between them). False for
/// other dtypes. IEEE 754-2008 binary16 / binary32 formats.
bool holds_non_float16_values(const Tensor& t);

/// Runs `model` on the reference interpreter in float32, once per sample of `samples` (one
/// interpreter for all), and lists for each, in node order, the float32 tensors (node outputs of
/// the main graph) whose largest finite |value| exceeds kFloat16Max: where a float16 run
/// overflows to inf. Errors (every sample's, or one sample's): those of Interpreter::create
/// (kUnsupported for ops without a kernel) and Interpreter::run.
std::vector<Expected<std::vector<Fp16Overflow>>> find_fp16_overflows(
    const LoadedModel& model, const std::vector<TensorMap>& samples);

}  // namespace onnxdbg
