#!/usr/bin/env bash
# One result, rendered three ways (issue 19 item 6): for each kind of `run` result (agree,
# disagree, layerwise with a first divergent node, layerwise with --isolate's own/inherited split,
# a first divergent node with ranks that differ from graph order, a backend that fails), the
# terminal's text, --json and the --html page say the same thing: the verdict line, the first
# divergent node (or none), and the worst nodes in the same order with the same own/inherited.
# usage: agreement.sh ONNXDBG
set -uo pipefail
bin=$(realpath -m "$1")
build=$(cd "$(dirname "$bin")" && pwd)
here=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
fail=0
command -v node >/dev/null || { echo "SKIP: node not found (reads the pages' data)"; exit 0; }
if ! /usr/bin/python3 -c 'import onnx' 2>/dev/null; then
  echo "FAIL: Debian's python3 lacks onnx (scripts/install-deps.sh installs it)"; exit 1
fi
"$build/make-demo-model" demo.onnx
# y = x + float(int4(c)): ONNX Runtime rounds the Cast to int4 where the reference truncates, so
# the first divergent node (the Cast) is not the one with the largest error (the Add).
/usr/bin/python3 - <<'PY' || { echo "FAIL: building the int4 model"; exit 1; }
import onnx
from onnx import helper, TensorProto
c = helper.make_tensor("c_value", TensorProto.FLOAT, [2], [-2.7, 3.9])
nodes = [
    helper.make_node("Constant", [], ["c"], name="const", value=c),
    helper.make_node("Cast", ["c"], ["c4"], name="to_int4", to=22),
    helper.make_node("Cast", ["c4"], ["cf"], name="to_float", to=TensorProto.FLOAT),
    helper.make_node("Mul", ["cf", "k"], ["cs"], name="scale"),
    helper.make_node("Add", ["x", "cs"], ["y"], name="add"),
]
k = helper.make_tensor("k", TensorProto.FLOAT, [], [3.0])
g = helper.make_graph(nodes, "int4", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])], [k])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)])
m.ir_version = 10
open("int4.onnx", "wb").write(m.SerializeToString())
PY
# The overflowing Mul two If levels down (the layerwise pass compares the branches taken).
/usr/bin/python3 - <<'PY' || { echo "FAIL: building the nested-If model"; exit 1; }
import onnx, onnx.parser
m = onnx.parser.parse_model("""
<ir_version: 8, opset_import: ["" : 13]>
nested_if (float[2,4] x) => (float[2,4] y)
<float[1] k1 = {1000.0}, float[1] k2 = {100.0}, float zero = {0.0}, float big = {1000.0}>
{
  s = ReduceSum<keepdims = 0>(x)
  c1 = Greater(s, zero)
  c2 = Less(s, big)
  y = If(c1) <
    then_branch = outer_then () => (float[2,4] t) {
      t = If(c2) <
        then_branch = inner_then () => (float[2,4] u) { a = Mul(x, k1)  b = Mul(a, k2)  u = Relu(b) },
        else_branch = inner_else () => (float[2,4] v) { v = Identity(x) }
      >
    },
    else_branch = outer_else () => (float[2,4] e) { e = Neg(x) }
  >
}""")
m.graph.node[3].name = "outer"
onnx.save(m, "nested_if.onnx")
PY

# agree NAME EXPECTED_EXIT MODEL RUN-ARGS...: the same run three times (text, --json --html).
agree() {
  local name=$1 want=$2 model=$3
  shift 3
  "$bin" run "$model" "$@" >"$name.txt" 2>"$name.err"
  local rc=$?
  "$bin" run "$model" "$@" --json --html "$name.html" >"$name.json" 2>/dev/null
  node "$here/tests/viewer/page_data.js" "$name.html" \
    '({report: D.report, labels: D.nodes.map((n) => `#${n.x != null ? n.x : 0} ${(n.d ? n.d + "." : "") + n.o}` + (n.n ? ` '"'"'${n.n}'"'"'` : ""))})' \
    >"$name.page.json" || { echo "FAIL $name: no page data"; fail=1; return; }
  if [ "$rc" != "$want" ]; then echo "FAIL $name: exit $rc, expected $want"; fail=1; return; fi
  if /usr/bin/python3 - "$name" <<'PY'; then echo "ok   $name: text, JSON and page agree"; else fail=1; fi
import json, re, sys
name = sys.argv[1]
text = open(f"{name}.txt").read().rstrip("\n").splitlines()
js = json.load(open(f"{name}.json"))
page = json.load(open(f"{name}.page.json"))
rep, labels = page["report"], page["labels"]
bad = []
def need(cond, what):
    if not cond:
        bad.append(what)
# The verdict: the terminal's last line is "VERDICT: verdict_line", as --json and the page give.
last = text[-1]
need(last.endswith(js["verdict_line"]), f"last line {last!r} vs JSON verdict_line {js['verdict_line']!r}")
need(rep["verdict_line"] == js["verdict_line"], "page verdict_line differs from --json")
need(rep["verdict"] == js["verdict"], "page verdict differs from --json")
# The first divergent node: named the same three ways, or none.
first_line = [l for l in text if l.startswith("first divergent node:")]
fj = js.get("first_divergent_node")
if "layerwise" in js:
    need(len(first_line) == 1, "the terminal names no first divergent node line")
if fj:
    # The page shows the result's label where it has one (a node inside an If branch is named
    # by its path), else the node's own.
    label = (rep["first"].get("label") or labels[rep["first"]["index"]]) if "first" in rep else None
    need(label is not None, "the page names no first divergent node")
    need(first_line and first_line[0].startswith(f"first divergent node: {label}"),
         f"terminal {first_line} vs page {label}")
    need(fj["tensor"] == rep["first"]["tensor"], "page first tensor differs from --json")
else:
    need("first" not in rep, f"the page names a first divergent node the result does not: {rep.get('first')}")
    if first_line:
        need(first_line[0].startswith("first divergent node: none"), f"terminal says {first_line[0]}")
# The worst nodes: the terminal's table, the JSON's ranking and the page's list, in one order.
for b in js.get("layerwise_summary", {}).get("backends", []):
    ranked = [w["tensor"] for w in b["worst"]]
    start = [i for i, l in enumerate(text) if l.startswith(f"worst tensors on {b['backend']} ")]
    if not ranked:
        need(not start, f"the terminal lists worst tensors on {b['backend']}, the JSON none")
        continue
    need(len(start) == 1, f"the terminal has no worst table for {b['backend']}")
    if not start:
        continue
    rows = text[start[0] + 3:start[0] + 3 + min(10, len(ranked))]
    for row, w in zip(rows, b["worst"]):
        cells = re.split(r"\s{2,}", row.strip())
        need(w["tensor"] in cells, f"terminal row {row.strip()!r} vs JSON {w['tensor']!r}")
        need((w["error_source"] or "") in ("", *cells), f"terminal row {row.strip()!r} lacks {w['error_source']}")
    page_worst = [w for w in rep["worst"] if w["backend"] == b["backend"]]
    seen = []
    for w in b["worst"]:
        if w["label"] not in seen:
            seen.append(w["label"])
    shown = [w.get("label") or labels[w["index"]] for w in page_worst]
    need(shown == seen[:len(page_worst)] and page_worst, f"page worst {shown} vs JSON {seen}")
    need([w["source"] for w in page_worst] ==
         [next(x["error_source"] for x in b["worst"] if x["tensor"] == w["tensor"]) for w in page_worst],
         "page own/inherited differs from --json")
if not js.get("layerwise_summary"):
    need(rep["worst"] == [] or all(not w["source"] for w in rep["worst"]), "page worst without layerwise")
for b in bad:
    print(f"FAIL {name}: {b}")
sys.exit(1 if bad else 0)
PY
}

agree agree 0 demo.onnx --backends reference,onnxruntime
agree disagree 1 demo.onnx --backends reference,opencv
agree layerwise 1 demo.onnx --backends reference,opencv --layerwise
agree isolate 1 demo.onnx --backends reference,opencv --layerwise --isolate
agree first_is_not_worst 1 int4.onnx --backends reference,onnxruntime --layerwise
agree first_is_not_worst_isolate 1 int4.onnx --backends reference,onnxruntime --layerwise --isolate
agree layerwise_agree 0 demo.onnx --backends reference,onnxruntime --layerwise
agree nested_if 1 nested_if.onnx --backends onnxruntime,reference:precision=fp16 --layerwise --isolate --atol 1e-2 --rtol 1e-2 --val-range 0.7,1
agree backend_fails 1 demo.onnx --backends reference,opencv,onnxruntime:debug_crash=load
exit $fail
