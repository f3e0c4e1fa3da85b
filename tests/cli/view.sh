#!/usr/bin/env bash
# `onnxdbg view` through the real binary, then the pages in headless chromium
# (tests/viewer/view_test.js): the demo model with the report of a real `onnxdbg run --json`, a
# diff (merged and side by side), highlighted nodes, names full of <>&'", and (when fetched)
# silero's If subgraphs (one of their nodes highlighted) and the PP-OCR detector,
# whose page must stay under 5 MB. Pages and screenshots go to a temporary folder removed at the
# end, or to $VIEW_TEST_OUT (created, and kept) when set. Skips the browser part, with a message,
# when chromium or playwright-core is missing.
# usage: view.sh ONNXDBG MODELS_DIR
set -uo pipefail
bin=$(realpath -m "$1") models=$(realpath -m "$2")
build=$(cd "$(dirname "$bin")" && pwd)
here=$(cd "$(dirname "$0")/../.." && pwd)
if [ -n "${VIEW_TEST_OUT:-}" ]; then
  out=$(realpath -m "$VIEW_TEST_OUT")
  rm -rf "$out"; mkdir -p "$out"
else
  out=$(mktemp -d)
  trap 'rm -rf "$out"' EXIT
fi
cd "$out"
fail=0
check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi; }

"$build/make-demo-model" "$out/demo.onnx"
# With --layerwise, so that the result names a first divergent node for the page to outline (the
# page never guesses one the result does not name).
"$bin" run "$out/demo.onnx" --backends reference,onnxruntime,opencv --layerwise --json > "$out/run.json"
check "run --layerwise --json of the demo model (opencv disagrees)" '[ -s "$out/run.json" ]'
"$bin" view "$out/demo.onnx" -o "$out/demo_report.html" --report "$out/run.json" --lint; rc=$?
check "view --report --lint: exit 0" '[ $rc -eq 0 ] && [ -s "$out/demo_report.html" ]'
check "the page fetches nothing (no http URL in src/href)" '! grep -Eq "(src|href)=\"https?:" "$out/demo_report.html"'

data=/usr/share/libonnx-testdata/data/node
if [ -d "$data" ]; then
  "$bin" view "$data/test_softmax_axis_0/model.onnx" -o "$out/diff.html" --diff "$data/test_softmax_axis_1/model.onnx"; rc=$?
  check "view --diff: exit 0" '[ $rc -eq 0 ]'
else
  echo "SKIP diff page: libonnx-testdata not installed"
fi

# A node, tensors and a graph named with HTML's special characters (ONNX text, parsed by protoc).
cat > "$out/names.txtpb" <<'PB'
ir_version: 8
opset_import { domain: "" version: 13 }
graph {
  name: "g</script><b>"
  input { name: "x&amp;\"'" type { tensor_type { elem_type: 1 shape { dim { dim_value: 2 } } } } }
  node { name: "<b>&'\"x</script>" op_type: "Relu" input: "x&amp;\"'" output: "<y>" }
  output { name: "<y>" type { tensor_type { elem_type: 1 shape { dim { dim_value: 2 } } } } }
}
PB
source "$here/tests/cli/common/onnx_proto.sh"
if [ "$protoc_ok" = 1 ]; then
  encode_onnx_text "$out/names.txtpb" "$out/names.onnx"
  "$bin" view "$out/names.onnx" -o "$out/names.html"; rc=$?
  check "names with <>&'\": exit 0, no raw </script> from the model" \
    '[ $rc -eq 0 ] && [ "$(grep -c "</script>" "$out/names.html")" -eq 3 ]'
else
  check "protoc and onnx.proto are installed (scripts/install-deps.sh)" false
fi

# Two small models for a side-by-side diff: Softmax's axis changed, Neg only in A, Abs only in B.
diff_model() {  # NAME AXIS LAST_OP
  cat > "$out/$1.txtpb" <<PB
ir_version: 8
opset_import { domain: "" version: 13 }
graph {
  name: "$1"
  input { name: "x" type { tensor_type { elem_type: 1 shape { dim { dim_value: 2 } dim { dim_value: 3 } } } } }
  node { name: "r1" op_type: "Relu" input: "x" output: "r" }
  node { name: "s1" op_type: "Softmax" input: "r" output: "s" attribute { name: "axis" i: $2 type: INT } }
  node { name: "$3_1" op_type: "$3" input: "s" output: "y" }
  output { name: "y" type { tensor_type { elem_type: 1 shape { dim { dim_value: 2 } dim { dim_value: 3 } } } } }
}
PB
  protoc --encode=onnx.ModelProto -I/usr/include /usr/include/onnx/onnx.proto \
    < "$out/$1.txtpb" > "$out/$1.onnx"
}
if command -v protoc >/dev/null && [ -f /usr/include/onnx/onnx.proto ]; then
  diff_model side_a 0 Neg
  diff_model side_b 1 Abs
  "$bin" view "$out/side_a.onnx" -o "$out/diff_side.html" --diff "$out/side_b.onnx" --diff-layout side; rc=$?
  check "view --diff --diff-layout side: exit 0" '[ $rc -eq 0 ]'
fi

# Highlighted nodes (what `onnxdbg reduce` will pass): by node label ("#2 Softmax", unnamed nodes).
"$bin" view "$out/demo.onnx" -o "$out/highlight.html" --highlight-nodes "#2 Softmax,#1 Relu"; rc=$?
check "view --highlight-nodes: exit 0" '[ $rc -eq 0 ] && grep -q "\"highlight\":{" "$out/highlight.html"'
err=$("$bin" view "$out/demo.onnx" -o "$out/x.html" --highlight-nodes "#2 Softmax,nope" 2>&1); rc=$?
check "--highlight-nodes with a name that is no node: exit 2, one sentence naming it" \
  '[ $rc -eq 2 ] && [ "$(echo "$err" | wc -l)" -eq 1 ] && echo "$err" | grep -q "highlighted node .nope. is not a node of demo.onnx"'

err=$("$bin" view /nonexistent.onnx -o "$out/x.html" 2>&1); rc=$?
check "missing model: exit 2, one sentence" '[ $rc -eq 2 ] && [ "$(echo "$err" | wc -l)" -eq 1 ]'
err=$("$bin" view "$out/demo.onnx" -o "$out/x.html" --report /nonexistent.json 2>&1); rc=$?
check "missing report: exit 2" '[ $rc -eq 2 ] && echo "$err" | grep -q "report file"'

if [ -f "$models/silero_vad_legacy.onnx" ]; then
  "$bin" view "$models/silero_vad_legacy.onnx" -o "$out/silero.html"
  # A node inside the If's else_branch, highlighted: the page must open with the If expanded.
  "$bin" view "$models/silero_vad_legacy.onnx" -o "$out/silero_highlight.html" \
    --highlight-nodes Reshape_512,Equal_23
fi
if [ -f "$models/ch_PP-OCRv4_det_infer.onnx" ]; then
  "$bin" view "$models/ch_PP-OCRv4_det_infer.onnx" -o "$out/ppocr.html" --lint
  size=$(stat -c %s "$out/ppocr.html")
  check "PP-OCR detector page under 5 MB ($size bytes)" '[ "$size" -lt 5000000 ]'
fi

if ! command -v node >/dev/null; then
  echo "SKIP browser tests: node not found"
else
  node "$here/tests/viewer/view_test.js" "$out" || fail=1
fi
exit $fail
