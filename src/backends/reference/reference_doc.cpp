// The `reference` backend's name, help and options (onnxdbg's own interpreter), for --backends'
// help and the checks of validate_backend_spec. Linked into onnxdbg itself, whether or not the
// backend runs in the worker.
#include "backends/backend.h"

namespace onnxdbg {

BackendDoc reference_backend_doc() {
  return {
      "reference",
      "onnxdbg's own interpreter, the golden backend (in process)",
      false,
      {{"profile", "0|1",
        "print time per op type to stderr when the session ends (also "
        "ONNXDBG_PROFILE=1)"},
       {"random_seed", "N",
        "seed of random ops without a seed attribute (default 0; runs "
        "repeat bit for bit)"},
       {"accumulate", "float|double",
        "precision of sums in accumulating ops (reductions, Softmax, normalisation "
        "statistics, MatMul, Gemm, Conv, ConvTranspose, pooling averages, RNNs): double runs "
        "them on float64 copies of float32/float16/bfloat16 inputs (BLAS dgemm) and rounds each "
        "result once to the output type, a stricter golden run (default float)"},
       {"threads", "N|auto",
        "threads the kernels split their work over (default 1; auto: the machine's, at most "
        "16); pays on large models (PP-OCRv4 det at 640x640: 123 -> 102 ms on 2 cores); work "
        "is cut into chunks fixed by the shapes, so every thread count gives the same bits"},
       {"timeout", "SECONDS",
        "a run that takes longer fails with \"timed out after N s\" (checked between nodes, in "
        "every Loop/Scan iteration and inside long kernels; default none, and a run past 10 s "
        "says on a terminal where it is; --timeout sets it)"},
       {"max_memory", "SIZE",
        "bytes one tensor (initializer or node output) may take, e.g. 4GB, 512MiB; a larger one "
        "fails the run before it is allocated (default 80% of the memory available; "
        "--max-memory sets it)"},
       {"max_iterations", "N",
        "iterations one Loop or Scan node may run; one that reaches N fails the run, naming "
        "the node (default none; --max-iterations sets it)"}},
      {}};
}

}  // namespace onnxdbg
