#!/usr/bin/env bash
# `onnxdbg conformance` through the real binary: a few ONNX backend cases on reference and
# onnxruntime, JSON output, and a usage error. usage: conformance.sh ONNXDBG MODELS_DIR
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
check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi; }

out=$("$bin" conformance "$data" --filter test_softmax_default_axis --backends reference,onnxruntime,opencv 2>&1); rc=$?
echo "$out"
check "opencv fails the opset-13 Softmax default axis, exit 1" '[ $rc -eq 1 ]'
check "reference passes it" 'echo "$out" | grep -q "^reference: 2 passed, 0 failed"'
check "onnxruntime passes it" 'echo "$out" | grep -q "^onnxruntime: 2 passed, 0 failed"'
check "the failure reason is printed" 'echo "$out" | grep -q "opencv test_softmax_default_axis: .*elements exceed"'
check "the per-opset table: opset 13, 2 cases, passes per backend" \
  'echo "$out" | grep -q "^by opset" && echo "$out" | grep -Eq "^13 +2 +2/2 +2/2 +1/2 *$"'

json=$("$bin" conformance "$data/test_add" "$data/test_relu" --json); rc=$?
check "two passing cases exit 0" '[ $rc -eq 0 ]'
check "json parses with the documented keys" 'echo "$json" | node -e "const j=JSON.parse(require(\"fs\").readFileSync(0,\"utf8\")); if (j.passed!==2||j.total!==2||j.failed!==0||j.unsupported!==0||j.cases[0].status!==\"pass\") process.exit(1); const o=j.cases[0].opset; if (!(o>0)||j.by_opset[String(o)].passed<1) process.exit(1)"'

err=$("$bin" conformance /nonexistent 2>&1); rc=$?
check "missing folder exits 2 with one sentence" '[ $rc -eq 2 ] && [ "$(echo "$err" | wc -l)" -eq 1 ] && echo "$err" | grep -q "^onnxdbg: error: .*not a folder"'
exit $fail
