#!/usr/bin/env bash
# A model that is float16 already (issue 19 item 4), through `run --layerwise --isolate` against
# ONNX Runtime, whose CPU provider computes Mul, Erf, Sqrt, ... of float16 tensors in float32 and
# drops the rounding between them. Its intermediate tensors are read through Casts to float32, so
# the report says which ones ONNX Runtime computed in float32; the first node, which reads the
# graph input and agrees alone, failed "in context" (not "inherited") and is the first divergent
# node; the nodes after it inherit.
# usage: float16_native.sh ONNXDBG
set -uo pipefail
bin=$(realpath -m "$1")
source "$(dirname "$0")/common/setup.sh"

require_debian_onnx
/usr/bin/python3 - <<'PY' || { echo "FAIL: building the model"; exit 1; }
import numpy as np, onnx
from onnx import helper, TensorProto, numpy_helper
k = numpy_helper.from_array(np.array([1.37], dtype=np.float16), "k")
nodes = [
    helper.make_node("Mul", ["x", "k"], ["a"], name="scale"),
    helper.make_node("Erf", ["a"], ["b"], name="erf"),
    helper.make_node("Sqrt", ["a"], ["c"], name="sqrt"),
    helper.make_node("Add", ["b", "c"], ["d"], name="add"),
    helper.make_node("Softmax", ["d"], ["e"], name="softmax", axis=-1),
    helper.make_node("Mul", ["e", "k"], ["y"], name="out"),
]
g = helper.make_graph(nodes, "fp16ops",
                      [helper.make_tensor_value_info("x", TensorProto.FLOAT16, [2, 16])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT16, [2, 16])], [k])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
m.ir_version = 8
onnx.save(m, "fp16.onnx")
PY

"$bin" run fp16.onnx --backends reference,onnxruntime --layerwise --isolate >out.txt 2>&1
check "the float16 model disagrees (exit 1)" '[ $? -eq 1 ]'
check "the note says ONNX Runtime computed float16 tensors in float32" \
  'grep -q "note (onnxruntime): [0-9]* of 6 float tensors hold values float16 cannot represent (first: .a. of node #0 Mul .scale.)" out.txt'
check "the first node failed in context, the rest inherited" \
  'grep -E -q "^  #0 Mul .scale. .* in context " out.txt && grep -E -q "^  #1 Erf .erf. .* inherited " out.txt'
check "the first divergent node is the Mul, failing in context" \
  'grep -q "^first divergent node: #0 Mul .scale., tensor .a., on onnxruntime: alone, on golden inputs, it agrees" out.txt'
check "a note says the model computes in float16 and which tolerances fit it" \
  'grep -q "note: the model computes in float16 or bfloat16 ([0-9]* such values in its main graph).*--atol 1e-3 --rtol 1e-2" out.txt'
"$bin" run fp16.onnx --backends reference,onnxruntime --atol 1e-3 --rtol 1e-2 >tol.txt 2>&1
check "no such note when --rtol is float16's precision or wider" '! grep -q "computes in float16" tol.txt'
"$bin" run fp16.onnx --backends reference,onnxruntime --layerwise --isolate --json >out.json 2>/dev/null
check "--json: computed_in_float32, error_source and basis" '/usr/bin/python3 -c "
import json
r = json.load(open(\"out.json\"))
a = [t for t in r[\"layerwise\"] if t[\"tensor\"] == \"a\"][0]
assert a[\"computed_in_float32\"] and a[\"error_source\"] == \"in context\", a
assert a[\"step_dtype\"] == \"float16\", a
assert r[\"first_divergent_node\"][\"basis\"] == \"context\", r[\"first_divergent_node\"]
"'
exit $fail
