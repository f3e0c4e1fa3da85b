#!/usr/bin/env bash
# `onnxdbg bisect-optimizers` as a user runs it (issue 36), on models written by
# make_bisect_models.py: the LayerNorm+GELU MLP whose extended level differs names the fusion,
# the original nodes it replaced and where the difference starts, and the named set disabled on
# `onnxdbg run` agrees again (ONNX Runtime itself, not onnxdbg's word); a double QDQ pair names
# the QDQ transformers; a model whose levels agree ends after one comparison with exit 0; a model
# ONNX Runtime cannot load and a non-ORT --backend are one sentence and exit 2.
# usage: bisect_optimizers.sh ONNXDBG MODELS_DIR
set -uo pipefail
bin=$(realpath -m "$1")
here=$(cd "$(dirname "$0")" && pwd)
source "$here/common/setup.sh"  # last: it changes the working directory
require_debian_onnx
/usr/bin/python3 "$here/make_bisect_models.py" "$tmp" || { echo "FAIL: make_bisect_models.py"; exit 1; }
od() { out=$("$bin" "$@" 2>"$tmp/err"); rc=$?; err=$(cat "$tmp/err"); }

od bisect-optimizers ln_gelu.onnx --val-range "[-3,3]" --atol 1e-6 --rtol 1e-6
echo "$out"
check "ln_gelu: exit 1 (the difference stands, its cause found)" '[ $rc -eq 1 ]'
found=$(grep "^FOUND: " <<<"$out" | sed -n 's/.*:disable=\([^ ]*\) agrees.*/\1/p')
check "ln_gelu: the FOUND line names the set to disable" '[ -n "$found" ]'
candidates=$(grep "changed the model (ONNX Runtime's log)" -A1 <<<"$out")
for name in ${found//+/ }; do
  check "ln_gelu: culprit $name is one ONNX Runtime's log named" 'grep -q "$name" <<<"$candidates"'
done
check "ln_gelu: the fused LayerNormalization stands for the written-out LayerNorm" \
  'grep -q "LayerNormalization .* <- #0 ReduceMean .ln_mean. + .*#8 Add .ln_add." <<<"$out"'
check "ln_gelu: where the difference starts" \
  'grep -q "first divergent original node (with against without them): #8 Add .ln_add.: its output .ln. is the first to differ" <<<"$out"'
check "ln_gelu: the session count against 2 k log2(N) + 2" 'grep -q "^sessions: 2 to compare, [0-9]* to bisect (2 k log2(N) + 2 = " <<<"$out"'
# What the user does next: ONNX Runtime with the set disabled agrees with opt=disabled.
od run ln_gelu.onnx --backends "onnxruntime:opt=disabled,onnxruntime:opt=all:disable=$found" \
  --val-range "[-3,3]" --atol 1e-6 --rtol 1e-6
check "ln_gelu: run with disable=$found agrees (exit 0)" '[ $rc -eq 0 ] && grep -q "^AGREE" <<<"$out"'
od run ln_gelu.onnx --backends onnxruntime:opt=disabled,onnxruntime:opt=all --val-range "[-3,3]" \
  --atol 1e-6 --rtol 1e-6
check "ln_gelu: run without it still disagrees (exit 1)" '[ $rc -eq 1 ]'

od bisect-optimizers ln_gelu.onnx --val-range "[-3,3]" --atol 1e-6 --rtol 1e-6 --json \
  --save-models "$tmp/models"
check "ln_gelu --json: valid JSON with the outcome and the culprits" \
  '/usr/bin/python3 -c "import json,sys; j=json.loads(sys.stdin.read()); assert j[\"outcome\"] == \"found\" and j[\"culprits\"] and j[\"effects\"] and j[\"sessions\"][\"search\"] <= j[\"sessions\"][\"bound\"]" <<<"$out"'
check "ln_gelu --json: nothing on stderr" '[ -z "$err" ]'
check "--save-models keeps both optimized models" \
  '[ -s "$tmp/models/optimized_with_culprits.onnx" ] && [ -s "$tmp/models/optimized_without_culprits.onnx" ]'

od bisect-optimizers ln_gelu.onnx --val-range "[-3,3]" --atol 1e-6 --rtol 1e-6 --html "$tmp/ln.html"
check "--html: a page with the fused LayerNorm's nodes highlighted" \
  '[ $rc -eq 1 ] && grep -q "ln_mean" "$tmp/ln.html" && grep -q "culprits.* nodes" "$tmp/ln.html"'

od bisect-optimizers double_qdq.onnx
check "double_qdq: exit 1, a culprit set found" '[ $rc -eq 1 ] && grep -q "^FOUND: .*QDQ" <<<"$out"'
check "double_qdq: the folded pair named in the original's nodes" \
  'grep -q "#7 DequantizeLinear .dq_out.\|#8 QuantizeLinear .q_out2." <<<"$out"'

od bisect-optimizers relu.onnx
check "relu: levels agree: exit 0 after one comparison" \
  '[ $rc -eq 0 ] && grep -q "^AGREE: no optimization changes the outputs" <<<"$out" && ! grep -q "^sessions" <<<"$out"'

od bisect-optimizers custom.onnx
check "custom op: exit 2, one sentence with ONNX Runtime's reason" \
  '[ $rc -eq 2 ] && [ "$(wc -l <<<"$err")" -eq 1 ] && grep -q "^onnxdbg: error: onnxruntime:.* could not load the model: ONNX Runtime: .*Mystery" <<<"$err"'
od bisect-optimizers relu.onnx --backend reference
check "--backend reference: exit 2 naming the option" '[ $rc -eq 2 ] && grep -q "must be onnxruntime" <<<"$err"'
od run relu.onnx --backends onnxruntime:disable=PadFusion
check "disable=PadFusion: a warning naming ORT's real name" \
  'grep -q "disable names .PadFusion., which is no graph transformer or rewrite rule .*did you mean Pad_Fusion?" <<<"$out"'
exit $fail
