#!/usr/bin/env bash
# Models with external data (weights in a separate file, issue 19 item 12) through the real binary,
# at a small size (bench/big_model.sh runs the same at 3.2 GB): run on the reference, ONNX Runtime
# and OpenCV; `run --layerwise` on ONNX Runtime (its per-layer models are written into a temp
# folder, away from the data); `surgeon sanitize` into another folder (a self-contained model that
# reloads and gives the same outputs); diff of the original and the sanitized model; reduce with a
# --check command run from another folder and with the built-in oracle on ONNX Runtime; view.
# usage: external_data.sh ONNXDBG
set -uo pipefail
bin=$(realpath -m "$1")
here=$(cd "$(dirname "$0")/../.." && pwd)
source "$(dirname "$0")/common/setup.sh"

require_debian_onnx
mkdir -p m out work
# 4 layers of MatMul 512x512 (1 MiB each, mapped rather than read) + Add + Tanh.
/usr/bin/python3 "$here/bench/make_big_model.py" m/model.onnx --hidden 512 --layers 4 >/dev/null ||
  { echo "FAIL: building the model"; exit 1; }
check "the weights are external" '[ -f m/model.onnx.data ] && [ $(stat -c %s m/model.onnx) -lt 10000 ]'

"$bin" run m/model.onnx --backends reference,onnxruntime,opencv --save-outputs golden.npz >run.txt 2>&1
check "run on reference, onnxruntime and opencv agrees" '[ $? -eq 0 ] && grep -q "^AGREE" run.txt'
check "opencv reads the external weights (inlined for it)" '! grep -q "failed" run.txt'

"$bin" run m/model.onnx --backends reference,onnxruntime --layerwise --json >lw.json 2>lw.err
rc=$?
check "run --layerwise on onnxruntime exits 0" '[ $rc -eq 0 ] || { cat lw.err; false; }'
check "every one of the 12 layer tensors is compared on onnxruntime" \
  '/usr/bin/python3 -c "
import json
r = json.load(open(\"lw.json\"))
assert r[\"first_divergent_node\"] is None, r[\"first_divergent_node\"]
ort = r[\"layerwise_summary\"][\"backends\"][0]
assert ort[\"ok\"] and not ort[\"error\"] and ort[\"observed\"] == 12, ort
assert sum(1 for t in r[\"layerwise\"] if t[\"observed\"] and t[\"pass\"]) == 12
"'

"$bin" surgeon sanitize m/model.onnx -o out/san.onnx >san.txt 2>&1
check "sanitize into another folder" '[ $? -eq 0 ] && [ -f out/san.onnx ]'
check "the sanitized model is self-contained (no references left)" \
  '"$bin" inspect out/san.onnx | grep -q "^Initializers  8" && ! "$bin" inspect out/san.onnx --json | grep -q "\"external_count\": [1-9]"'
"$bin" run out/san.onnx --backends reference,onnxruntime --load-outputs golden.npz >san_run.txt 2>&1
check "the sanitized model gives the original's outputs" '[ $? -eq 0 ]'
"$bin" diff m/model.onnx out/san.onnx >diff.txt 2>&1
check "diff of the original and the sanitized model" '[ $? -eq 0 ] && grep -q "same graph" diff.txt'

# The --check command runs in another folder than the model's: the candidate it reads is written
# self-contained there. It fails while the candidate holds layer2.weight and its values are
# readable, so the reduction ends at MatMul_2 alone.
(cd work && "$bin" reduce ../m/model.onnx -o red.onnx --check sh -c \
  "\"$bin\" inspect --mode weights onnxdbg_debug.onnx | grep -q 'layer2.weight.*float32' && exit 1; exit 0" \
  >../reduce_check.txt 2>&1)
check "reduce --check from another folder ends at 1 node" \
  '"$bin" inspect work/red.onnx 2>&1 | grep -q "^Nodes         1$" || { tail -5 reduce_check.txt; false; }'
check "the reduced model reads its weights" '"$bin" inspect --mode weights work/red.onnx | grep -q "layer2.weight"'
check "no data file or link is left beside the check's artifact" '[ -z "$(ls work | grep -v -E "^(red.onnx|red.onnx.journal|onnxdbg_debug.onnx|onnxdbg_debug_inputs.npz)$")" ]'

# Built-in oracle: ONNX Runtime loads every candidate from reduce's work folder with the
# original's weights (the test hook crashes its run, after the load, so every candidate that
# loads fails the same way).
"$bin" reduce m/model.onnx -o out/red2.onnx --fail-on error \
  --backends reference,onnxruntime:debug_crash=run >reduce_builtin.txt 2>&1
check "reduce with the built-in oracle on onnxruntime ends at 1 node" \
  '"$bin" inspect out/red2.onnx 2>&1 | grep -q "^Nodes         1$" || { tail -5 reduce_builtin.txt; false; }'

"$bin" view m/model.onnx -o v.html >view.txt 2>&1
check "view" '[ $? -eq 0 ] && [ -s v.html ]'
check "no stray files beside the model" '[ "$(ls m | sort | tr "\n" " ")" = "model.onnx model.onnx.data " ]'
exit $fail
