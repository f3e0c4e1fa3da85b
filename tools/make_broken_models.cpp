// make-broken-models MODEL OUT_DIR: writes the seed-shaped failures of a real model, for lint and
// surgeon tests: truncated.onnx (last nodes dropped, the graph output left without a producer),
// undefined_input.onnx (the first graph input renamed, so its readers read an undefined name),
// out_of_order.onnx (a Cast, or else the first node, moved after its consumers) and
// low_opset.onnx (the opset import lowered below the op that needs the newest one).
// make-broken-models --lint-fixes OUT_DIR: writes small hand-written models, one per case of a fix
// lint suggests (tests/cli/lint_fixes.sh runs every command lint names on them).
#include <algorithm>
#include <filesystem>
#include <iostream>

#include "core/onnx.h"
#include "model/model.h"
#include "onnx/defs/parser.h"
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

// The cases of lint's suggested fixes, in ONNX text format: name -> model. Each triggers
// use_before_definition or op_not_in_opset; the comment says whether a command can fix it.
const std::pair<const char*, const char*> kLintFixModels[] = {
    // Sorting fixes it: `surgeon sanitize --toposort`.
    {"out_of_order", R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[2] x) => (float[2] y) {
  y = Neg(a)
  a = Relu(x)
})"},
    // The same inside an If branch (the sort covers subgraphs).
    {"out_of_order_subgraph", R"(
<ir_version: 8, opset_import: ["" : 13]>
g (bool c, float[2] x) => (float[2] y) {
  y = If(c) <then_branch = t () => (float[2] ty) { ty = Neg(ta)  ta = Relu(x) },
             else_branch = e () => (float[2] ey) { ey = Identity(x) }>
})"},
    // Sorting works but the result still has a lint error (an unknown attribute): no command.
    {"out_of_order_and_bad_attribute", R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[2] x) => (float[2] y) {
  y = Neg(a)
  a = Relu<bogus = 1>(x)
})"},
    // A cycle: no order exists, no command.
    {"cycle", R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[2] x) => (float[2] b) {
  a = Add(x, b)
  b = Relu(a)
})"},
    // The reported case (issue 19): opset 9 declared, opset-11 forms of Clip, Resize and Pad used.
    // convert-opset cannot help (no adapter into Resize's first version); declaring 11 does.
    {"opset11_forms", R"(
<ir_version: 6, opset_import: ["" : 9]>
g (float[1,1,2,2] x) => (float[1,1,6,6] y)
<float lo = {0.0}, float hi = {6.0}, float[0] roi = {},
 float[4] scales = {1.0, 1.0, 2.0, 2.0}, int64[8] pads = {0, 0, 1, 1, 0, 0, 1, 1}> {
  c = Clip(x, lo, hi)
  r = Resize<mode = "nearest">(c, roi, scales)
  y = Pad(r, pads)
})"},
    // Resize's opset-10 form at opset 9: declaring 10 fixes it; no command.
    {"resize10_form", R"(
<ir_version: 6, opset_import: ["" : 9]>
g (float[1,1,2,2] x) => (float[1,1,4,4] y) <float[4] scales = {1.0, 1.0, 2.0, 2.0}> {
  y = Resize<mode = "nearest">(x, scales)
})"},
    // GroupNormalization-18 was deprecated; opset 21 defines it again and ONNX's converter has
    // the adapter: `surgeon convert-opset --opset 21`.
    {"group_norm_18", R"(
<ir_version: 8, opset_import: ["" : 18]>
g (float[1,4,2,2] x) => (float[1,4,2,2] y) <float[2] s = {1.0, 1.0}, float[2] b = {0.0, 0.0}> {
  y = GroupNormalization<num_groups = 2>(x, s, b)
})"},
    // Both at once: each edit alone leaves the other error, so neither command is named.
    {"group_norm_18_out_of_order", R"(
<ir_version: 8, opset_import: ["" : 18]>
g (float[1,4,2,2] x) => (float[1,4,2,2] y) <float[2] s = {1.0, 1.0}, float[2] b = {0.0, 0.0}> {
  y = Neg(n)
  n = GroupNormalization<num_groups = 2>(x, s, b)
})"},
    // Removed ops without a later version: replace them (Resize, ScatterElements); no command.
    {"upsample_10", R"(
<ir_version: 6, opset_import: ["" : 10]>
g (float[1,1,2,2] x) => (float[1,1,4,4] y) <float[4] scales = {1.0, 1.0, 2.0, 2.0}> {
  y = Upsample<mode = "nearest">(x, scales)
})"},
    {"scatter_11", R"(
<ir_version: 6, opset_import: ["" : 11]>
g (float[4] x) => (float[4] y) <int64[1] i = {1}, float[1] u = {5.0}> {
  y = Scatter(x, i, u)
})"},
};

int write_lint_fix_models(const fs::path& out) {
  fs::create_directories(out);
  bool ok = true;
  for (const auto& [name, text] : kLintFixModels) {
    onnx::ModelProto m;
    onnx::OnnxParser parser(text);
    if (auto st = parser.Parse(m); !st.IsOK())
      return fail(std::string(name) + ": " + st.ErrorMessage());
    ok &= save(m, out / (std::string(name) + ".onnx"));
  }
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::string(argv[1]) == "--lint-fixes") return write_lint_fix_models(argv[2]);
  if (argc != 3) {
    std::cerr << "usage: make-broken-models MODEL OUT_DIR | --lint-fixes OUT_DIR\n";
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
