// Rendering of a CompareRunReport (the result of `onnxdbg run`) for people (aligned tables and a
// verdict line) and for programs (one JSON object; schema in README.md "run --json").
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>

#include "comparator/compare_run.h"

namespace onnxdbg::report {

/// Prints the model, the backends table, one comparison table per output, validation findings
/// and the verdict line. `color` adds ANSI colours (pass green, fail red).
void print_run_report(const CompareRunReport& rep, std::ostream& os, bool color);

/// print_run_report without the model line and the verdict: inputs, backends, comparisons,
/// float16 overflow points, validation; what one sample of several shows under its heading.
void print_run_tables(const CompareRunReport& rep, std::ostream& os, bool color);

/// "\n<prefix>DISAGREE: <line>" (AGREE, DISAGREE or ERROR, coloured when `color`).
void print_verdict(Verdict verdict, const std::string& line, std::ostream& os, bool color,
                   const std::string& prefix = "");

/// The JSON form: verdict, verdict_line, model, inputs, backends, comparisons, validation.
nlohmann::json run_report_json(const CompareRunReport& rep);

/// The JSON form of several samples (README "run --json"). One sample: exactly
/// run_report_json of it. Several: the aggregate verdict and verdict_line, model, error_stat,
/// sample 0's inputs, each backend once (failed when it failed on any sample; failed_samples;
/// run_seconds the mean), empty comparisons, fp16_overflows and validation, sample_count,
/// failing_samples, and samples: [{sample: i, ...run_report_json of sample i without model and
/// error_stat}].
nlohmann::json run_samples_json(const SamplesRunReport& rep);

/// A JSON number, or null for NaN/Inf (JSON has no such numbers).
nlohmann::json json_number(double v);

/// Adds "step_dtype" (the type's name, or null), "max_error_steps" (number, or null),
/// "quant_scale" and "max_dequantized_error" (numbers for a quantized tensor, else null) to a
/// comparison's JSON object.
void add_step_fields(nlohmann::json& j, const TensorComparison& r);

}  // namespace onnxdbg::report
