// Fuzz target: a model file's bytes through the loader, lint (ONNX checker, shape inference in its
// child process, onnxdbg's rules), inspect (every mode, weights read) and the viewer's data, whose
// JSON must serialize. What `onnxdbg inspect/lint/view` do with a hostile file, minus the I/O.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_limits.h"
#include "inspect/inspect.h"
#include "lint/lint.h"
#include "model/model.h"
#include "onnxdbg/common.h"
#include "report/lint_report.h"
#include "report/viewer.h"

using namespace onnxdbg;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const ScopedRunLimits limits(fuzz_limits());
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  // External data resolves in a folder that does not exist: every location is an error to report.
  auto model = parse_model(bytes, "/nonexistent/onnxdbg-fuzz", "fuzz input");
  if (!model) return 0;
  if (auto findings = lint::lint_model(*model))
    (void)api::json_text(report::lint_report_json(*findings, "fuzz input"));
  InspectOptions all;
  all.layers = all.attributes = all.weights = true;
  if (auto summary = summarize_model(*model, all)) {
    (void)render_summary_text(*summary);
    (void)api::json_text(summary_to_json(*summary));
  }
  if (auto view = report::viewer_data(*model)) (void)api::json_text(*view);
  return 0;
}
