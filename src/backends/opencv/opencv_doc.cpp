// The `opencv` backend's name, help and options (OpenCV DNN), for --backends' help and the checks
// of validate_backend_spec. Linked into onnxdbg itself, whether or not the backend runs in the
// worker.
#include "backends/backend.h"

namespace onnxdbg {

BackendDoc opencv_backend_doc() {
  BackendDoc doc{"opencv",
                 "OpenCV DNN 4.6 (CPU), in an isolated worker process",
                 true,
                 {{"threads", "N",
                   "threads for OpenCV's parallel loops (cv::setNumThreads; default: "
                   "OpenCV's choice)"},
                  {"timeout", "SECONDS", "kill the worker after this long (default 300)"}},
                 {}};
  doc.traits.observes_by_layer_name = true;
  return doc;
}

}  // namespace onnxdbg
