#!/usr/bin/env bash
# `surgeon sanitize` and `convert-opset` check that the written model computes the original's
# outputs (issue 19 item 8): on a plain model it says so for the reference and ONNX Runtime; on a
# model whose folded constants ONNX Runtime computes differently (it rounds Cast float -> int4,
# the spec and the reference truncate), sanitize --fold-constants bakes the reference's values in,
# and the check reports that ONNX Runtime's outputs changed, with exit status 1.
# usage: sanitize_verify.sh ONNXDBG
set -uo pipefail
bin=$(realpath -m "$1")
here=$(cd "$(dirname "$0")/../.." && pwd)
source "$(dirname "$0")/common/setup.sh"

require_debian_onnx
/usr/bin/python3 "$here/bench/make_big_model.py" mlp.onnx --hidden 64 --layers 2 >/dev/null ||
  { echo "FAIL: building the MLP"; exit 1; }
# y = x + float(int4(c)) with c a Constant: foldable, and ONNX Runtime 1.29 rounds the Cast.
/usr/bin/python3 - <<'PY' || { echo "FAIL: building the int4 model"; exit 1; }
import onnx
from onnx import helper, TensorProto
INT4 = 22
c = helper.make_tensor("c_value", TensorProto.FLOAT, [2], [-2.7, 3.9])
nodes = [
    helper.make_node("Constant", [], ["c"], name="const", value=c),
    helper.make_node("Cast", ["c"], ["c4"], name="to_int4", to=INT4),
    helper.make_node("Cast", ["c4"], ["cf"], name="to_float", to=TensorProto.FLOAT),
    helper.make_node("Add", ["x", "cf"], ["y"], name="add"),
]
g = helper.make_graph(nodes, "int4_fold",
                      [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)])
m.ir_version = 10
open("int4.onnx", "wb").write(m.SerializeToString())
PY

"$bin" surgeon sanitize mlp.onnx -o mlp_san.onnx --cleanup >plain.txt 2>&1
rc=$?
check "sanitize of a plain model exits 0" '[ $rc -eq 0 ] || { cat plain.txt; false; }'
check "it says the outputs were checked on the reference and onnxruntime" \
  'grep -q "^checked: the written model computes the original.s outputs on reference (max abs error 0), onnxruntime" plain.txt'
"$bin" surgeon sanitize mlp.onnx -o mlp_san.onnx --json >plain.json 2>/dev/null
check "--json carries one passing check per backend" '/usr/bin/python3 -c "
import json
v = json.load(open(\"plain.json\"))[\"verification\"]
assert [b[\"backend\"] for b in v[\"backends\"]] == [\"reference\", \"onnxruntime\"], v
assert all(b[\"pass\"] and b[\"error\"] is None for b in v[\"backends\"]), v
"'
"$bin" surgeon convert-opset mlp.onnx --opset 17 -o mlp17.onnx >conv.txt 2>&1
check "convert-opset checks its result too" '[ $? -eq 0 ] && grep -q "^checked: " conv.txt'

"$bin" surgeon sanitize int4.onnx -o int4_san.onnx --fold-constants >int4.txt 2>&1
rc=$?
check "sanitize --fold-constants that changes onnxruntime's outputs exits 1" '[ $rc -eq 1 ] || { cat int4.txt; false; }'
check "the reference computes the same outputs" 'grep -q "^checked: .*on reference (max abs error 0)" int4.txt'
check "the WARNING names onnxruntime, the output and the error" \
  'grep -q "^WARNING: on onnxruntime the written model.s outputs differ from the original.s: output .y.: .*(max abs error 1 in .y.)" int4.txt'
check "the model was still written (the check comes after)" '[ -f int4_san.onnx ]'

"$bin" surgeon sanitize int4.onnx -o int4_san2.onnx --fold-constants --no-verify >nov.txt 2>&1
check "--no-verify skips the check" '[ $? -eq 0 ] && ! grep -q -E "^(checked|WARNING)" nov.txt'
"$bin" surgeon sanitize int4.onnx -o int4_san3.onnx --fold-constants --verify-backends reference >ref.txt 2>&1
check "--verify-backends reference only" '[ $? -eq 0 ] && grep -q "^checked: .*on reference (max abs error 0)$" ref.txt'
"$bin" surgeon sanitize int4.onnx -o x.onnx --verify-backends nosuch >bad.txt 2>&1
check "an unknown verify backend is a usage error" '[ $? -eq 2 ] && grep -q "verify-backends" bad.txt'
exit $fail
