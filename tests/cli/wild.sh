#!/usr/bin/env bash
# Models from the wild (issue 19), built by make_wild_models.py with Debian's python3-onnx, through
# the real binary: a float16 model listing 79 nodes before their inputs' producers runs on the
# reference and agrees with ONNX Runtime (layerwise too) while lint still reports the order; a
# model every backend finds invalid exits 2 naming each reason last; OpenCV's row for a model its
# importer cannot take with symbolic dims is a failed load with OpenCV's reason, and the time of
# an import put off to the first run is its load time; an IR 15
# model's warning (newer than the linked ONNX 1.23) prints once, and an IR 10 model has none.
# usage: wild.sh ONNXDBG MODELS_DIR
set -uo pipefail
bin=$(realpath -m "$1") models=$(realpath -m "$2")
here=$(cd "$(dirname "$0")" && pwd)
source "$(dirname "$0")/common/setup.sh"

if ! /usr/bin/python3 -c 'import onnx, numpy' 2>/dev/null; then
  echo "FAIL: Debian's python3 lacks onnx or numpy (scripts/install-deps.sh installs them)"; exit 1
fi
/usr/bin/python3 "$here/make_wild_models.py" "$tmp" || { echo "FAIL: make_wild_models.py"; exit 1; }

# --- out of order -------------------------------------------------------------------------------
# float16 tolerances: ONNX Runtime's CPU kernels round differently by a unit in the last place.
out=$("$bin" run out_of_order_fp16.onnx --backends reference,onnxruntime --atol 1e-3 --rtol 1e-2 2>&1); rc=$?
echo "$out" | grep -E "note|AGREE|ERROR|DISAGREE"
check "out-of-order float16 model agrees on reference and onnxruntime" \
  '[ $rc -eq 0 ] && [[ "$(tail -n1 <<<"$out")" == AGREE* ]]'
check "the note counts the 79 nodes and names the whole surgeon sanitize --toposort command" \
  'grep -q "79 nodes are listed before the nodes producing their inputs" <<<"$out" && grep -q "surgeon sanitize out_of_order_fp16.onnx --toposort -o out_of_order_fp16.sorted.onnx" <<<"$out"'
out=$("$bin" run out_of_order_fp16.onnx --backends reference,onnxruntime --atol 1e-3 --rtol 1e-2 --layerwise 2>&1); rc=$?
check "--layerwise on it agrees (exit 0, AGREE last)" '[ $rc -eq 0 ] && [[ "$(tail -n1 <<<"$out")" == AGREE* ]]'
out=$("$bin" lint out_of_order_fp16.onnx --json 2>&1); rc=$?
check "lint still reports use_before_definition (79 findings)" \
  '[ $rc -eq 1 ] && [ "$(grep -c "\"rule\": \"use_before_definition\"" <<<"$out")" -eq 79 ]'

# --- exit status and last line ------------------------------------------------------------------
out=$("$bin" run reshape_mismatch.onnx --backends reference,onnxruntime 2>&1); rc=$?
tail -n1 <<<"$out"
check "a model every backend finds invalid exits 2, each reason on the last line" \
  '[ $rc -eq 2 ] && [[ "$(tail -n1 <<<"$out")" == "ERROR: every backend failed on the model, which reference found invalid: reference (run): "* ]] && grep -q "onnxruntime (run): " <<<"$(tail -n1 <<<"$out")"'

# --- OpenCV and symbolic dims -------------------------------------------------------------------
out=$("$bin" run dynamic_no_shape.onnx --backends reference,opencv --input-shapes x:2x4 2>&1); rc=$?
echo "$out" | grep -E "opencv|ERROR|AGREE"
row=$(grep -E "^  opencv +(ok|failed)" <<<"$out")
check "opencv's row is a failed load with OpenCV's reason, not ok with load 0 us" \
  '[[ "$row" == *"failed (load)"* ]] && [[ "$row" == *"OpenCV: "* ]] && [ $rc -eq 1 ] && grep -q "could not run on opencv (load): OpenCV: " <<<"$(tail -n1 <<<"$out")"'

# The PP-OCR classifier: OpenCV imports it only once the input's dims are fixed (at the first run);
# that import is its load time (was "0 us").
cls="$models/ch_ppocr_mobile_v2.0_cls_infer.onnx"
if [ -f "$cls" ]; then
  out=$("$bin" run "$cls" --backends reference,opencv --input-shapes x:1x3x48x192 2>&1); rc=$?
  row=$(grep -E "^  opencv +(ok|failed)" <<<"$out")
  echo "$row"
  check "opencv's deferred import of the classifier is its load time, not 0 us" \
    '[ $rc -eq 0 ] && [[ "$row" == *" ok "* ]] && [[ "$row" != *" 0 us "* ]]'
else
  echo "FAIL: $cls missing (make models)"; fail=1
fi

# --- IR versions -------------------------------------------------------------------------------
out=$("$bin" run ir10.onnx --backends reference,onnxruntime 2>&1); rc=$?
check "an IR 10 model (ONNX 1.16+) runs without an IR warning, exit 0" \
  '[ $rc -eq 0 ] && ! grep -q "IR version 10" <<<"$out"'
out=$("$bin" run ir15.onnx --backends reference,onnxruntime 2>&1); rc=$?
check "an IR 15 model's warning prints once" '[ "$(grep -c "has IR version 15, newer than" <<<"$out")" -eq 1 ]'

exit $fail
