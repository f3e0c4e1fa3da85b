#!/usr/bin/env bash
# `onnxdbg diff` through the real binary: same model, different models, JSON, a missing file.
# usage: diff.sh ONNXDBG MODELS_DIR
set -uo pipefail
bin=$(realpath -m "$1")
# Everything it writes, and whatever onnxdbg writes by default into the current folder, goes
# into a folder of its own that is removed at the end.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
data=/usr/share/libonnx-testdata/data/node
[ -d "$data" ] || { echo "SKIP: libonnx-testdata not installed"; exit 0; }
fail=0
check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1 (last exit status ${rc:-none})"; fail=1; fi; }

out=$("$bin" diff "$data/test_add/model.onnx" "$data/test_add/model.onnx"); rc=$?
check "a model against itself: exit 0, same graph" '[ $rc -eq 0 ] && echo "$out" | grep -q "have the same graph"'
out=$("$bin" diff "$data/test_softmax_axis_0/model.onnx" "$data/test_softmax_axis_1/model.onnx"); rc=$?
echo "$out"
check "axis 0 vs 1: exit 1, attribute change" '[ $rc -eq 1 ] && echo "$out" | grep -q "attribute axis 0 -> 1"'
json=$("$bin" diff "$data/test_add/model.onnx" "$data/test_relu/model.onnx" --json); rc=$?
check "json parses with the documented keys" '[ $rc -eq 1 ] && echo "$json" | node -e "const j=JSON.parse(require(\"fs\").readFileSync(0,\"utf8\")); for (const k of [\"summary\",\"only_in_a\",\"only_in_b\",\"changed\",\"graph\"]) if (!(k in j)) process.exit(1)"'
err=$("$bin" diff "$data/test_add/model.onnx" /nonexistent.onnx 2>&1); rc=$?
check "missing file: exit 2, one sentence" '[ $rc -eq 2 ] && [ "$(echo "$err" | wc -l)" -eq 1 ] && echo "$err" | grep -q "^onnxdbg: error: .*does not exist"'
exit $fail
