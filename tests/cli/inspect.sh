#!/usr/bin/env bash
# CLI test of `onnxdbg inspect`, run by CTest as: bash inspect.sh /path/to/onnxdbg /path/to/models
# Runs the real binary on a small model copied from the ONNX conformance data (an If with two
# subgraphs), on the real models in the models folder when present, and on broken files.
set -u
ONNXDBG=$(realpath -m "${1:?usage: inspect.sh ONNXDBG MODELS_DIR}")
MODELS=${2:+$(realpath -m "$2")}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
cd "$TMP"  # whatever onnxdbg writes by default into the current folder goes there too
failures=0

fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# expect_ok NAME ARGS...: runs onnxdbg, requires exit 0, leaves stdout in $TMP/out.
expect_ok() {
  local name=$1; shift
  "$ONNXDBG" "$@" >"$TMP/out" 2>"$TMP/err"
  local rc=$?
  [ $rc -eq 0 ] || fail "$name: exit $rc, stderr: $(cat "$TMP/err")"
}

# expect_line NAME REGEX: $TMP/out has a line matching REGEX.
expect_line() {
  grep -Eq -- "$2" "$TMP/out" || { fail "$1: no line matching /$2/ in:"; head -40 "$TMP/out"; }
}

# expect_json NAME: $TMP/out parses as JSON.
expect_json() {
  python3 -m json.tool "$TMP/out" >/dev/null 2>&1 || fail "$1: --json output does not parse"
}

# expect_error NAME ARGS...: exit 2, nothing on stdout, one stderr line starting "onnxdbg: error:".
expect_error() {
  local name=$1; shift
  "$ONNXDBG" "$@" >"$TMP/out" 2>"$TMP/err"
  local rc=$?
  [ $rc -eq 2 ] || fail "$name: exit $rc, expected 2"
  [ "$(wc -l <"$TMP/err")" -eq 1 ] || fail "$name: stderr is not one line: $(cat "$TMP/err")"
  grep -q '^onnxdbg: error: ' "$TMP/err" || fail "$name: stderr lacks 'onnxdbg: error:': $(cat "$TMP/err")"
  [ ! -s "$TMP/out" ] || fail "$name: printed to stdout"
}

# --- a model written by the test: test_if from the ONNX conformance data ------------------------
SRC=/usr/share/libonnx-testdata/data/node/test_if/model.onnx
if [ -f "$SRC" ]; then
  cp "$SRC" "$TMP/if.onnx"
  expect_ok basic inspect "$TMP/if.onnx"
  expect_line basic '^Model +if\.onnx'
  expect_line basic '^IR version +6$'
  expect_line basic '^Opsets +ai\.onnx 11$'
  expect_line basic '^  cond +bool +\[\]$'
  expect_line basic '^  res +float32 +\[5\]$'
  expect_line basic '^Nodes +1  \(\+2 in 2 subgraphs\)$'
  expect_line basic 'Constant +2 +If +1'

  expect_ok layers inspect "$TMP/if.onnx" --mode layers
  expect_line layers '^  0  - +If +cond -> res$'
  expect_line layers '^     then_branch: graph .then_body. \(1 node\)$'
  expect_line layers '^       0  - +Constant +-> then_out$'

  expect_ok attrs inspect "$TMP/if.onnx" --mode attrs
  expect_line attrs 'then_branch = <subgraph 1 nodes>'
  expect_line attrs 'value = float32 \[5\]'

  expect_ok weights inspect "$TMP/if.onnx" --mode weights
  expect_line weights '^Constant weights \(2\)$'
  expect_line weights '^  then_out +float32 +\[5\] +20 B'

  for mode in basic layers attrs weights; do
    expect_ok "json-$mode" inspect "$TMP/if.onnx" --mode $mode --json
    expect_json "json-$mode"
  done
  expect_line json '"count_with_subgraphs": 3'
  expect_line json '"nan_count": 0'
else
  echo "note: $SRC missing (libonnx-testdata); skipping the small-model checks"
fi

# --- real models ---------------------------------------------------------------------------------
CLS=$MODELS/ch_ppocr_mobile_v2.0_cls_infer.onnx
if [ -f "$CLS" ]; then
  expect_ok cls inspect "$CLS"
  expect_line cls '^Model +ch_ppocr_mobile_v2\.0_cls_infer\.onnx'
  expect_line cls '^  x +float32 +\[p2o\.DynamicDimension\.0, 3, '
  expect_line cls '^Nodes +[0-9]+$'
  expect_line cls 'Conv +[0-9]+'
  awk 'length($0) > 100 { exit 1 }' "$TMP/out" || fail "cls: basic output wider than 100 columns"
  expect_ok cls-weights inspect "$CLS" --mode weights --json
  expect_json cls-weights
  expect_line cls-weights '"source": "Constant"'
  expect_ok cls-attrs inspect "$CLS" --mode attrs
  expect_line cls-attrs 'kernel_shape = \[3, 3\]'
else
  echo "note: $CLS missing; skipping"
fi

VAD=$MODELS/silero_vad_legacy.onnx
if [ -f "$VAD" ]; then
  expect_ok vad inspect "$VAD"
  expect_line vad '^Producer +pytorch'
  expect_line vad '^  input +float32 +\[batch, sequence\]$'
  expect_line vad 'subgraphs\)$'
  expect_ok vad-layers inspect "$VAD" --mode layers
  expect_line vad-layers '^ +else_branch: graph'
  expect_ok vad-json inspect "$VAD" --mode layers --json
  expect_json vad-json
  # --show-tensors: inferred types of every main-graph tensor, symbolic dims by name.
  expect_ok vad-tensors inspect "$VAD" --show-tensors
  expect_line vad-tensors '^Tensors \(77, types and shapes from ONNX shape inference\)$'
  expect_line vad-tensors '^  output +float32 +\[batch, 1\] +#1 If .If_25.$'
  expect_line vad-tensors '^  onnx::Equal_124 +int64 +\[\] +initializer$'
else
  echo "note: $VAD missing; skipping"
fi

# --- errors: one line on stderr, exit 2 ----------------------------------------------------------
expect_error missing inspect "$TMP/does_not_exist.onnx"
grep -q 'does not exist' "$TMP/err" || fail "missing: $(cat "$TMP/err")"
if [ -f "$SRC" ]; then
  head -c 100 "$SRC" >"$TMP/truncated.onnx"
  expect_error truncated inspect "$TMP/truncated.onnx"
fi
printf 'graph {\n  node { op_type: "Relu" }\n}\n' >"$TMP/text.onnx"
expect_error text inspect "$TMP/text.onnx"
: >"$TMP/empty.onnx"
expect_error empty inspect "$TMP/empty.onnx"
# A bad option is a usage error (CLI11's message), also exit 2.
"$ONNXDBG" inspect "$TMP/text.onnx" --mode full >/dev/null 2>&1
[ $? -eq 2 ] || fail "bad-mode: expected exit 2"

if [ $failures -ne 0 ]; then
  echo "$failures check(s) failed"
  exit 1
fi
echo "all inspect CLI checks passed"
