// `surgeon sanitize --toposort`: the stable topological order of lint/fixes.h (where lint tries it
// on a copy before it suggests the command), applied to the main graph and every subgraph.
#include "lint/fixes.h"
#include "surgeon/surgeon.h"

namespace onnxdbg::surgeon {

Expected<int64_t> toposort(onnx::ModelProto& model) { return lint::sort_nodes(model); }

}  // namespace onnxdbg::surgeon
