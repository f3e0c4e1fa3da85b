// The batch's report: the fleet views over every job (which op types diverge on which backend
// across models, which backends fail to load or run which models, the slowest jobs, the crashes
// and timeouts) and index.html, one row per model.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace onnxdbg::batch {

/// The fleet views of summary.json from its job rows (each {model, command, status, seconds,
/// line, details, ...}): {op_types: [{op_type, backend, models}], backend_errors: [{backend,
/// stage, models, example}], slowest: [{model, command, seconds}] (10 at most), crashes:
/// [{model, command, status, cause}]}, each most models first.
nlohmann::json fleet_json(const nlohmann::json& jobs);

/// index.html of `summary` (to_json of a BatchResult): the counts, a table with one row per
/// model and one column per command (status, the job's line, its time, a link to its page
/// jobs/<key>/page.html), and the fleet views. One self-contained file; every text escaped.
std::string index_html(const nlohmann::json& summary);

}  // namespace onnxdbg::batch
