// The environment every unit test runs in, set before main: ONNX Runtime's telemetry off, because
// its client (in the onnxdbg-worker processes the tests start) writes .ses and mat-debug-PID.log
// into TMPDIR, and the tests must leave TMPDIR empty (scripts/check-test-leftovers.sh).
#include <stdlib.h>

namespace {

// setenv's last argument 0: a value the person running the tests chose is kept.
[[maybe_unused]] const int kTelemetryOff = setenv("ORT_DISABLE_TELEMETRY", "1", 0);

}  // namespace
