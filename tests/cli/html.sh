#!/usr/bin/env bash
# `--html PATH` on run, lint and diff through the real binary: each writes the viewer page, and
# the data embedded in the page (read back by tests/viewer/page_data.js) carries the command's
# result: the same page `onnxdbg view` writes with --report, --lint or --diff.
# usage: html.sh ONNXDBG MODELS_DIR
set -uo pipefail
bin=$(realpath -m "$1")
build=$(cd "$(dirname "$bin")" && pwd)
here=$(cd "$(dirname "$0")/../.." && pwd)
# The pages and models go into a folder of their own, removed at the end.
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cd "$out"
fail=0
check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi; }
command -v node >/dev/null || { echo "SKIP: node not found (reads the pages' data)"; exit 0; }
page() { node "$here/tests/viewer/page_data.js" "$1" "$2"; }
# same PAGE1 PAGE2 EXPR: EXPR gives the same, non-empty, value on both pages.
same() { local x; x=$(page "$1" "$3") && [ -n "$x" ] && [ "$x" = "$(page "$2" "$3")" ]; }

"$build/make-demo-model" "$out/demo.onnx"

# run: the plain report, with --json on stdout untouched and the note on stderr.
"$bin" run "$out/demo.onnx" --backends reference,opencv --json --html "$out/run.html" \
  > "$out/run.json" 2> "$out/run.err"; rc=$?
check "run --json --html: exit 1 (opencv disagrees), page written, note on stderr" \
  '[ $rc -eq 1 ] && [ -s "$out/run.html" ] && grep -q "^wrote $out/run.html" "$out/run.err"'
check "run --json --html: stdout is still one JSON object" \
  'node -e "JSON.parse(require(\"fs\").readFileSync(process.argv[1], \"utf8\"))" "$out/run.json"'
check "run page: verdict disagree" '[ "$(page "$out/run.html" D.report.verdict)" = "\"disagree\"" ]'
check "run page: Softmax carries a failing error on opencv" \
  '[ "$(page "$out/run.html" "(({e}) => [e.pass, e.backend])(D.nodes.find((n) => n.o === \"Softmax\"))")" = "[false,\"opencv\"]" ]'
"$bin" view "$out/demo.onnx" -o "$out/run_view.html" --report "$out/run.json" > /dev/null
check "run page: the same overlay as view --report of its --json" \
  'same "$out/run.html" "$out/run_view.html" "[D.report, D.nodes.map((n) => n.e || null)]"'

# run --layerwise --isolate: own errors and the first divergent node.
"$bin" run "$out/demo.onnx" --backends reference,opencv --layerwise --isolate \
  --save-repro "$out/repro" --html "$out/layerwise.html" > "$out/layerwise.txt" 2>&1; rc=$?
check "run --layerwise --html: exit 1, page written" '[ $rc -eq 1 ] && [ -s "$out/layerwise.html" ]'
check "layerwise page: the layerwise overlay" '[ "$(page "$out/layerwise.html" D.report.layerwise)" = true ]'
check "layerwise page: first divergent node is the Softmax, with its own error" \
  '[ "$(page "$out/layerwise.html" "((f) => [D.nodes[f.index].o, D.nodes[f.index].e.own > 0.01])(D.report.first)")" = "[\"Softmax\",true]" ]'

# lint: findings painted on nodes of a model whose nodes are out of order.
"$build/make-broken-models" "$out/demo.onnx" "$out/broken" > /dev/null
"$bin" lint "$out/broken/out_of_order.onnx" --html "$out/lint.html" > "$out/lint.txt" 2> "$out/lint.err"; rc=$?
check "lint --html: exit 1 (errors), page written" '[ $rc -eq 1 ] && grep -q "^wrote" "$out/lint.err"'
check "lint page: error count and an error painted on a node" \
  '[ "$(page "$out/lint.html" "D.lint.counts.error > 0 && D.nodes.some((n) => (n.l || []).some((f) => f[0] === \"error\"))")" = true ]'
"$bin" view "$out/broken/out_of_order.onnx" -o "$out/lint_view.html" --lint > /dev/null
check "lint page: the same findings as view --lint" \
  'same "$out/lint.html" "$out/lint_view.html" "[D.lint, D.nodes.map((n) => n.l || null)]"'

# diff: merged by default, side by side on request.
data=/usr/share/libonnx-testdata/data/node
if [ -d "$data" ]; then
  "$bin" diff "$data/test_softmax_axis_0/model.onnx" "$data/test_softmax_axis_1/model.onnx" \
    --html "$out/diff.html" > "$out/diff.txt" 2> "$out/diff.err"; rc=$?
  check "diff --html: exit 1, page written" '[ $rc -eq 1 ] && grep -q "^wrote" "$out/diff.err"'
  check "diff page: summary, merged layout, the changed Softmax marked with what changed" \
    '[ "$(page "$out/diff.html" "[D.diff.summary.length > 0, D.diff.layout, D.nodes[0].df, /axis 0 -> 1/.test(D.nodes[0].dw[0])]")" = "[true,\"merged\",\"c\",true]" ]'
  "$bin" diff "$data/test_add/model.onnx" "$data/test_relu/model.onnx" --html "$out/diff_side.html" \
    --diff-layout side > /dev/null 2>&1; rc=$?
  check "diff --diff-layout side: exit 1" '[ $rc -eq 1 ]'
  check "side page: Add only in A, the other model whole with Relu only in B" \
    '[ "$(page "$out/diff_side.html" "[D.diff.layout, D.nodes[0].o, D.nodes[0].df, D.nodes.filter((n) => n.g === D.diff.side_graph).map((n) => n.o + \":\" + n.df).join()]")" = "[\"side\",\"Add\",\"a\",\"Relu:b\"]" ]'
else
  echo "SKIP diff pages: libonnx-testdata not installed"
fi

# Bad input: one sentence, exit 2.
err=$("$bin" lint "$out/demo.onnx" --html /nonexistent/dir/x.html 2>&1 >/dev/null); rc=$?
check "lint --html into a missing folder: exit 2, one sentence" \
  '[ $rc -eq 2 ] && [ "$(echo "$err" | wc -l)" -eq 1 ] && echo "$err" | grep -q "cannot write"'
err=$("$bin" diff "$out/demo.onnx" "$out/demo.onnx" --html "$out/x.html" --diff-layout diagonal 2>&1 >/dev/null); rc=$?
check "diff --diff-layout diagonal: exit 2, refused" '[ $rc -eq 2 ] && echo "$err" | grep -q "diff-layout"'
err=$("$bin" view "$out/demo.onnx" -o "$out/y.html" --diff-layout side 2>&1 >/dev/null); rc=$?
check "view --diff-layout without --diff: exit 2, says it needs --diff" \
  '[ $rc -eq 2 ] && echo "$err" | grep -q -- "--diff" && [ ! -e "$out/y.html" ]'
err=$("$bin" diff "$out/demo.onnx" "$out/demo.onnx" --diff-layout side 2>&1 >/dev/null); rc=$?
check "diff --diff-layout without --html: exit 2, says it needs --html" \
  '[ $rc -eq 2 ] && echo "$err" | grep -q -- "--html"'
exit $fail
