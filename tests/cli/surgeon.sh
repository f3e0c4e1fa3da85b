#!/usr/bin/env bash
# `onnxdbg surgeon` through the real binary. Seed-shaped broken models made from a public model
# (tools/make_broken_models.cpp) lint with the expected rule, and `sanitize --toposort` repairs the
# out-of-order one. Each public model, after `sanitize --fold-constants --override-input-shapes`,
# still agrees on reference and onnxruntime and gives the original's outputs on the same inputs.
# usage: surgeon.sh ONNXDBG MODELS_DIR
set -uo pipefail
bin=$(realpath -m "$1") models=$(realpath -m "$2")
here=$(cd "$(dirname "$0")/../.." && pwd)
broken_tool="$(dirname "$bin")/make-broken-models"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"  # whatever onnxdbg writes by default into the current folder goes there too
fail=0
check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fail=1; return 1; fi; }

# Max |a-b| <= atol + rtol*|a| over every array of A.npz (golden names only, no BACKEND/ prefix)
# against the same name in B.npz; numpy-free (zipfile + struct), so it runs on a bare Debian.
npz_close() {
  python3 - "$1" "$2" <<'PY'
import ast, struct, sys, zipfile, array
def load(p):
    out = {}
    with zipfile.ZipFile(p) as z:
        for n in z.namelist():
            b = z.read(n)
            assert b[:6] == b"\x93NUMPY", n
            hl = struct.unpack("<H", b[8:10])[0] if b[6] == 1 else struct.unpack("<I", b[8:12])[0]
            start = 10 if b[6] == 1 else 12
            h = ast.literal_eval(b[start:start + hl].decode("latin1"))
            code = {"<f4": "f", "<f8": "d", "<i8": "q", "<i4": "i", "|b1": "B", "|u1": "B", "|i1": "b"}[h["descr"]]
            a = array.array(code); a.frombytes(b[start + hl:])
            out[n[:-4] if n.endswith(".npy") else n] = (tuple(h["shape"]), a)
    return out
A, B = load(sys.argv[1]), load(sys.argv[2])
bad = 0
for name, (shape, a) in A.items():
    if "/" in name: continue
    if name not in B: print("  missing output", name); bad = 1; continue
    bshape, b = B[name]
    if shape != bshape: print("  shape", name, shape, bshape); bad = 1; continue
    worst = max((abs(x - y) - (1e-4 + 1e-3 * abs(x)) for x, y in zip(a, b)), default=-1)
    diff = max((abs(x - y) for x, y in zip(a, b)), default=0)
    print("  %s: max abs diff %.3g over %d values" % (name, diff, len(a)))
    if worst > 0: bad = 1
sys.exit(bad)
PY
}

if [ ! -f "$models/.verified" ]; then
  echo "SKIP: public models not fetched"
  exit 0
fi

# --- broken models from a real one ----------------------------------------------------------------
src="$models/ch_ppocr_mobile_v2.0_cls_infer.onnx"
if [ -x "$broken_tool" ]; then
  # The detector: it uses Resize (opset 10), so lowering its opset has something to break.
  "$broken_tool" "$models/ch_PP-OCRv4_det_infer.onnx" "$tmp/broken" >/dev/null 2>&1
  check "make-broken-models wrote four models" '[ $(ls "$tmp/broken"/*.onnx | wc -l) -eq 4 ]'
  for pair in truncated:missing_graph_output undefined_input:undefined_input \
              out_of_order:use_before_definition low_opset:op_not_in_opset; do
    name=${pair%%:*} rule=${pair#*:}
    out=$("$bin" lint "$tmp/broken/$name.onnx" --json 2>&1); rc=$?
    check "lint $name.onnx exits 1 with $rule" '[ $rc -eq 1 ] && grep -q "\"rule\": \"$rule\"" <<<"$out"'
  done
  out=$("$bin" surgeon sanitize "$tmp/broken/out_of_order.onnx" -o "$tmp/repaired.onnx" --toposort 2>&1); rc=$?
  echo "$out"
  check "sanitize --toposort repairs out_of_order.onnx" '[ $rc -eq 0 ] && grep -q "reordered" <<<"$out"'
  "$bin" lint "$tmp/repaired.onnx" >/dev/null 2>&1; rc=$?
  check "the repaired model lints clean" '[ $rc -eq 0 ]'
  out=$("$bin" surgeon sanitize "$tmp/broken/truncated.onnx" -o "$tmp/never.onnx" 2>&1); rc=$?
  check "a result with lint errors is refused, naming the rule" \
    '[ $rc -eq 2 ] && [ ! -f "$tmp/never.onnx" ] && grep -q "missing_graph_output" <<<"$out"'
else
  echo "FAIL: $broken_tool not built"; fail=1
fi

# --- extract / convert-opset / to-fp16 on a real model -------------------------------------------------
out=$("$bin" surgeon extract "$src" -o "$tmp/head.onnx" --inputs x:1x3x48x192:float32 --outputs softmax_0.tmp_0 2>&1); rc=$?
echo "$out"
check "extract the whole cls model by name" '[ $rc -eq 0 ]'
out=$("$bin" surgeon convert-opset "$src" -o "$tmp/cls13.onnx" --opset 13 2>&1); rc=$?
check "convert-opset 9 -> 13 of the model with dynamic dims (ONNX 1.23's converter) runs and agrees" \
  '[ $rc -eq 0 ] && "$bin" run "$tmp/cls13.onnx" --input-shapes x:1x3x48x192 --atol 1e-4 --rtol 1e-3 >/dev/null 2>&1'
"$bin" surgeon sanitize "$src" -o "$tmp/cls_static.onnx" --override-input-shapes x:1x3x48x192 --fold-constants >/dev/null
out=$("$bin" surgeon convert-opset "$tmp/cls_static.onnx" -o "$tmp/cls13.onnx" --opset 13 2>&1); rc=$?
echo "$out"
check "convert-opset 9 -> 13 of the static model runs and agrees" '[ $rc -eq 0 ] && "$bin" run "$tmp/cls13.onnx" --atol 1e-4 --rtol 1e-3 >/dev/null 2>&1'
out=$("$bin" surgeon convert-opset "$models/ch_PP-OCRv4_det_infer.onnx" -o "$tmp/det9.onnx" --opset 9 2>&1); rc=$?
echo "$out"
check "convert-opset names the op it cannot convert" '[ $rc -eq 2 ] && grep -q "cannot convert Clip" <<<"$out"'
# set-opset declares without converting: on a model whose ops mean the same at both opsets the
# result runs and agrees; where they do not (Clip takes min/max as inputs from opset 11) the lint
# check refuses the result; an opset this ONNX does not know is refused; nothing written then.
out=$("$bin" surgeon set-opset "$tmp/cls_static.onnx" -o "$tmp/cls_declared.onnx" --opset 10 2>&1); rc=$?
echo "$out"
check "set-opset 9 -> 10 says so and the result runs" \
  '[ $rc -eq 0 ] && grep -q "declared opset 9 -> 10 (no node converted)" <<<"$out" && "$bin" run "$tmp/cls_declared.onnx" --atol 1e-4 --rtol 1e-3 >/dev/null 2>&1'
out=$("$bin" surgeon set-opset "$tmp/cls_static.onnx" -o "$tmp/never.onnx" --opset 11 2>&1); rc=$?
check "set-opset 9 -> 11 is refused: its Clip nodes have the opset-9 form" \
  '[ $rc -eq 2 ] && grep -q "is not an attribute of Clip (opset 11)" <<<"$out" && [ ! -f "$tmp/never.onnx" ]' || echo "$out"
out=$("$bin" surgeon set-opset "$src" -o "$tmp/never.onnx" --opset 99 2>&1); rc=$?
check "set-opset 99 is refused in one sentence" '[ $rc -eq 2 ] && grep -q "outside the opsets this ONNX knows" <<<"$out" && [ ! -f "$tmp/never.onnx" ]' || echo "$out"
out=$("$bin" surgeon to-fp16 "$src" -o "$tmp/cls16.onnx" --keep-io-types 2>&1); rc=$?
echo "$out"
check "to-fp16 --keep-io-types runs on reference" '[ $rc -eq 0 ] && "$bin" run "$tmp/cls16.onnx" --backends reference --input-shapes x:1x3x48x192 >/dev/null 2>&1'

# --- sanitize --fold-constants on every public model ---------------------------------------------------
count=0
while read -r file args; do
  case "$file" in ''|\#*) continue ;; esac
  count=$((count + 1))
  shapes=() ; mode=""
  for a in $args; do
    case "$a" in --input-shapes) mode=s ;; --*) mode="" ;; *) [ "$mode" = s ] && shapes+=("$a") ;; esac
  done
  override=()
  [ ${#shapes[@]} -gt 0 ] && override=(--override-input-shapes "${shapes[@]}")
  m="$models/$file" s="$tmp/${file%.onnx}.sanitized.onnx"
  "$bin" run "$m" --backends onnxruntime $args --save-inputs "$tmp/in.npz" --save-outputs "$tmp/a.npz" >/dev/null 2>&1
  out=$("$bin" surgeon sanitize "$m" -o "$s" --fold-constants --cleanup "${override[@]}" 2>&1); rc=$?
  echo "$file: $(head -1 <<<"$out")"
  check "$file: sanitize exits 0" '[ $rc -eq 0 ]' || continue
  out=$("$bin" run "$s" --backends reference,onnxruntime --atol 1e-4 --rtol 1e-3 --load-inputs "$tmp/in.npz" --save-outputs "$tmp/b.npz" 2>&1); rc=$?
  check "$file: sanitized model agrees on reference and onnxruntime" '[ $rc -eq 0 ]' || echo "$out" | tail -5
  check "$file: same outputs as the original" 'npz_close "$tmp/a.npz" "$tmp/b.npz"'
done < "$here/tests/public_models.txt"
check "sanitize checked all six public models" '[ $count -eq 6 ]'
exit $fail
