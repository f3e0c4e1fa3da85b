#!/usr/bin/env bash
# `onnxdbg lint` through the real binary: a truncated model with a misspelt input exits 1 and
# names the fix; a valid ONNX test model exits 0; a missing file exits 2 with one error line;
# --json is valid JSON; the public models (when fetched) lint without errors.
# usage: lint.sh ONNXDBG MODELS_DIR
set -uo pipefail
bin=$(realpath -m "$1") models=$(realpath -m "$2")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"  # whatever onnxdbg writes by default into the current folder goes there too
fail=0
check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi; }

# A broken model, written as protobuf text so the repository ships no binary: node 'relu' reads
# 'x1' (the input is 'x.1') and the graph output 'feat_3' has lost its producer.
cat > "$tmp/broken.txtpb" <<'PB'
ir_version: 8
opset_import { domain: "" version: 13 }
graph {
  name: "truncated"
  input { name: "x.1" type { tensor_type { elem_type: 1 shape { dim { dim_value: 2 } } } } }
  node { name: "relu" op_type: "Relu" input: "x1" output: "feat_1" }
  node { name: "neg" op_type: "Neg" input: "feat_1" output: "feat_2" }
  output { name: "feat_3" type { tensor_type { elem_type: 1 shape { dim { dim_value: 2 } } } } }
}
PB
if command -v protoc >/dev/null && [ -f /usr/include/onnx/onnx.proto ]; then
  protoc --encode=onnx.ModelProto -I/usr/include /usr/include/onnx/onnx.proto \
    < "$tmp/broken.txtpb" > "$tmp/broken.onnx"
  out=$("$bin" lint "$tmp/broken.onnx" 2>&1); rc=$?
  echo "$out"
  check "broken model exits 1" '[ $rc -eq 1 ]'
  check "hint for the misspelt input" 'grep -q "did you mean '"'"'x.1'"'"'?" <<<"$out"'
  check "truncated output and its nearest producer" 'grep -q "feat_3.*feat_2" <<<"$out"'
  check "summary line" 'grep -Eq "^[0-9]+ errors?, [0-9]+ warnings?, [0-9]+ info in broken.onnx" <<<"$out"'
  "$bin" lint "$tmp/broken.onnx" --json > "$tmp/broken.json"; rc=$?
  check "--json exits 1 too" '[ $rc -eq 1 ]'
  check "--json parses" 'python3 -m json.tool "$tmp/broken.json" >/dev/null'
  check "--json has findings and counts" 'grep -q "\"undefined_input\"" "$tmp/broken.json" && grep -q "\"counts\"" "$tmp/broken.json"'
else
  echo "SKIP broken model: protoc or /usr/include/onnx/onnx.proto missing"
fi

clean=/usr/share/libonnx-testdata/data/node/test_add/model.onnx
if [ -f "$clean" ]; then
  out=$("$bin" lint "$clean" 2>&1); rc=$?
  check "valid model exits 0" '[ $rc -eq 0 ]'
  check "valid model: 0 errors" 'grep -q "^0 errors" <<<"$out"'
  "$bin" lint "$clean" --json > "$tmp/clean.json"; rc=$?
  check "valid model --json exits 0 and parses" '[ $rc -eq 0 ] && python3 -m json.tool "$tmp/clean.json" >/dev/null'
else
  echo "SKIP valid model: libonnx-testdata not installed"
fi

err=$("$bin" lint "$tmp/no_such_model.onnx" 2>&1 >/dev/null); rc=$?
check "missing file exits 2" '[ $rc -eq 2 ]'
check "one 'onnxdbg: error:' line" '[ "$(grep -c "^onnxdbg: error:" <<<"$err")" -eq 1 ] && [ "$(wc -l <<<"$err")" -eq 1 ]'
printf 'not a model' > "$tmp/text.onnx"
"$bin" lint "$tmp/text.onnx" >/dev/null 2>&1; rc=$?
check "non-model file exits 2" '[ $rc -eq 2 ]'

if [ -f "$models/.verified" ]; then
  for m in "$models"/*.onnx; do
    out=$("$bin" lint "$m" 2>&1); rc=$?
    check "$(basename "$m") lints without errors ($(tail -1 <<<"$out"))" '[ $rc -eq 0 ]'
    [ $rc -eq 0 ] || echo "$out"
  done
else
  echo "SKIP public models: not fetched"
fi
exit $fail
