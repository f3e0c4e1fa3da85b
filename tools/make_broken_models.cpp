// make-broken-models MODEL OUT_DIR: writes the seed-shaped failures of a real model, for lint and
// surgeon tests: truncated.onnx (last nodes dropped, the graph output left without a producer),
// undefined_input.onnx (the first graph input renamed, so its readers read an undefined name),
// out_of_order.onnx (a Cast, or else the first node, moved after its consumers) and
// low_opset.onnx (the opset import lowered below the op that needs the newest one).
#include <algorithm>
#include <filesystem>
#include <iostream>

#include "core/onnx.h"
#include "model/model.h"
#include "onnx/defs/schema.h"

namespace fs = std::filesystem;

namespace {

int fail(const std::string& what) {
  std::cerr << "make-broken-models: " << what << "\n";
  return 1;
}

bool save(const onnx::ModelProto& m, const fs::path& p) {
  auto st = onnxdbg::save_model(m, p);
  if (!st)
    std::cerr << "make-broken-models: " << st.to_string() << "\n";
  else
    std::cout << p.string() << "\n";
  return st.is_ok();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: make-broken-models MODEL OUT_DIR\n";
    return 2;
  }
  auto loaded = onnxdbg::load_model(argv[1]);
  if (!loaded) return fail(loaded.status().to_string());
  const onnx::ModelProto& src = loaded->proto;
  const fs::path out = argv[2];
  fs::create_directories(out);
  const int n = src.graph().node_size();
  if (n < 4) return fail("the model needs at least 4 nodes");
  bool ok = true;

  {  // Truncated: drop the last quarter of the nodes (at least 3); outputs stay declared.
    onnx::ModelProto m = src;
    const int drop = std::max(3, n / 4);
    m.mutable_graph()->mutable_node()->DeleteSubrange(n - drop, drop);
    ok &= save(m, out / "truncated.onnx");
  }
  {  // Undefined input: the graph input gets a new name; its readers keep the old one.
    onnx::ModelProto m = src;
    std::unordered_set<std::string> inits;
    for (const auto& t : m.graph().initializer()) inits.insert(t.name());
    for (auto& vi : *m.mutable_graph()->mutable_input())
      if (!inits.count(vi.name())) {
        vi.set_name(vi.name() + "_renamed");
        break;
      }
    ok &= save(m, out / "undefined_input.onnx");
  }
  {  // Out of order: a Cast (else the first node) moved to the end, after its consumers.
    onnx::ModelProto m = src;
    auto* nodes = m.mutable_graph()->mutable_node();
    int pick = 0;
    for (int i = 0; i < n - 1; ++i)
      if (nodes->Get(i).op_type() == "Cast") {
        pick = i;
        break;
      }
    for (int i = pick; i < n - 1; ++i) nodes->SwapElements(i, i + 1);
    ok &= save(m, out / "out_of_order.onnx");
  }
  {  // Low opset: one below the first version of the op that needs the newest opset.
    onnx::ModelProto m = src;
    const int64_t opset = onnxdbg::model_opset(m, "");
    int need = 1;
    std::string op;
    for (const auto& node : m.graph().node()) {
      if (!node.domain().empty() && node.domain() != "ai.onnx") continue;
      // The earliest version of this op: its first since_version.
      const auto* s = onnx::OpSchemaRegistry::Schema(node.op_type(), static_cast<int>(opset), "");
      if (!s) continue;
      int first = s->SinceVersion();
      for (int v = first - 1; v >= 1; --v) {
        const auto* older = onnx::OpSchemaRegistry::Schema(node.op_type(), v, "");
        if (!older) break;
        first = older->SinceVersion();
        v = first;
      }
      if (first > need) {
        need = first;
        op = node.op_type();
      }
    }
    if (need <= 1) return fail("every op of the model exists since opset 1; cannot lower it");
    for (auto& o : *m.mutable_opset_import())
      if (o.domain().empty() || o.domain() == "ai.onnx") o.set_version(need - 1);
    std::cerr << "low_opset.onnx: opset " << need - 1 << ", below " << op << " (since " << need
              << ")\n";
    ok &= save(m, out / "low_opset.onnx");
  }
  return ok ? 0 : 1;
}
