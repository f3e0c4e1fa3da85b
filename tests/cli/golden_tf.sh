#!/usr/bin/env bash
# The CLI golden path for a TensorFlow dump (issue 33 item 5): a tf2onnx-style model (NHWC input,
# a Transpose to NCHW, two 1x1 Conv+Relu layers in scopes the converter numbered,
# 'model_1/conv2_1/...', a mean) and golden values as TensorFlow gives them (keys
# 'model/conv2/Relu:0', NHWC tensors), written by numpy with the original weights; the model has
# one weight of conv2 changed. Without the flags the file is refused (a name, then a shape); with
# --golden-names suffix --golden-layout auto (and nhwc) the layerwise pass names conv2's Conv as
# the first divergent node with its own error, and says what it renamed and transposed (notes on
# stderr, "golden_mapping" in --json); on the unchanged model it agrees. Refused without them, the
# error names the flags that would fit the file. A bad choice, and a key that ends two tensors'
# names, are usage errors naming the choices / the tensors; the flags without golden values say
# they do nothing.
# usage: golden_tf.sh ONNXDBG
set -uo pipefail
bin=$(realpath -m "$1")
source "$(dirname "$0")/common/setup.sh"  # last: it changes the working directory
require_debian_onnx

/usr/bin/python3 - <<'PY' || { echo "FAIL: building the models and the golden file"; exit 1; }
import numpy as np
from onnx import TensorProto, helper, numpy_helper, save

rng = np.random.default_rng(7)
x = rng.standard_normal((1, 6, 6, 3)).astype(np.float32)          # NHWC, as TensorFlow feeds it
w1 = rng.standard_normal((3, 4)).astype(np.float32)               # 1x1 kernels, in -> out
b1 = rng.standard_normal(4).astype(np.float32)
w2 = rng.standard_normal((4, 4)).astype(np.float32)
b2 = rng.standard_normal(4).astype(np.float32)

# TensorFlow's values, NHWC, keyed by TensorFlow's names (no converter numbering).
c1 = x @ w1 + b1
r1 = np.maximum(c1, 0)
c2 = r1 @ w2 + b2
r2 = np.maximum(c2, 0)
mean = r2.mean(axis=(1, 2))
np.savez("in.npz", input_1=x)
np.savez("golden.npz", **{"model/conv1/BiasAdd:0": c1, "model/conv1/Relu:0": r1,
                          "model/conv2/BiasAdd:0": c2, "model/conv2/Relu:0": r2,
                          "model/pool/Mean:0": mean, "Identity:0": mean})
np.savez("ambiguous.npz", **{"Relu:0": r1, "Identity:0": mean})

def model(path, w2_onnx):
    s = "model_1/"
    inits = [numpy_helper.from_array(w1.T.reshape(4, 3, 1, 1).copy(), s + "conv1_1/kernel"),
             numpy_helper.from_array(b1, s + "conv1_1/bias"),
             numpy_helper.from_array(w2_onnx.T.reshape(4, 4, 1, 1).copy(), s + "conv2_1/kernel"),
             numpy_helper.from_array(b2, s + "conv2_1/bias")]
    nodes = [
        helper.make_node("Transpose", ["input_1"], [s + "conv1_1/Conv2D__6:0"],
                         name=s + "conv1_1/Conv2D__6", perm=[0, 3, 1, 2]),
        helper.make_node("Conv", [s + "conv1_1/Conv2D__6:0", s + "conv1_1/kernel",
                                  s + "conv1_1/bias"], [s + "conv1_1/BiasAdd:0"],
                         name=s + "conv1_1/Conv2D"),
        helper.make_node("Relu", [s + "conv1_1/BiasAdd:0"], [s + "conv1_1/Relu:0"],
                         name=s + "conv1_1/Relu"),
        helper.make_node("Conv", [s + "conv1_1/Relu:0", s + "conv2_1/kernel", s + "conv2_1/bias"],
                         [s + "conv2_1/BiasAdd:0"], name=s + "conv2_1/Conv2D"),
        helper.make_node("Relu", [s + "conv2_1/BiasAdd:0"], [s + "conv2_1/Relu:0"],
                         name=s + "conv2_1/Relu"),
        helper.make_node("ReduceMean", [s + "conv2_1/Relu:0"], [s + "pool_1/Mean:0"],
                         name=s + "pool_1/Mean", axes=[2, 3], keepdims=0),
        helper.make_node("Identity", [s + "pool_1/Mean:0"], ["Identity:0"], name="Identity"),
    ]
    g = helper.make_graph(
        nodes, "tf2onnx", [helper.make_tensor_value_info("input_1", TensorProto.FLOAT, [1, 6, 6, 3])],
        [helper.make_tensor_value_info("Identity:0", TensorProto.FLOAT, [1, 4])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    save(m, path)

model("ok.onnx", w2)
bad = w2.copy()
bad[0, 0] += 0.5  # one weight of conv2 changed in the ONNX model
model("bad.onnx", bad)
PY

run() { "$bin" run "$@" --load-inputs in.npz --backends reference >out.txt 2>err.txt; rc=$?; }

# As before: refused by name, then (names fitted alone) by the NHWC shape.
run bad.onnx --load-outputs golden.npz --layerwise
cat err.txt
check "TF keys without --golden-names suffix are refused, naming the flags that fit (exit 2)" \
  '[ $rc = 2 ] && grep -q "which is not a tensor of the model.*(--golden-names suffix would rename 5 keys that end one tensor.s name each (.model/conv1/BiasAdd:0. -> .model_1/conv1_1/BiasAdd:0.,.*; --golden-layout auto would transpose 4 tensors whose shape is the model.s with their axes permuted (rank 4 by (0,3,1,2): .model_1/conv1_1/BiasAdd:0.," err.txt'
run bad.onnx --load-outputs golden.npz --layerwise --golden-names suffix
cat err.txt
check "NHWC tensors without --golden-layout are refused by shape, naming the flag (exit 2)" \
  '[ $rc = 2 ] && grep -q "shape \[1x6x6x4\].*(--golden-layout auto would transpose 4 tensors" err.txt'

# Both flags: the changed Conv is the first divergent node, with its own error.
run bad.onnx --load-outputs golden.npz --layerwise --isolate --save-repro - \
  --golden-names suffix --golden-layout auto
echo "--- onnxdbg run bad.onnx --load-outputs golden.npz --layerwise --isolate --golden-names suffix --golden-layout auto (exit $rc)"
cat err.txt out.txt
check "auto: disagrees (exit 1)" '[ $rc = 1 ]'
check "auto: conv2's Conv is the first divergent node, by its own error" \
  'grep -q "first divergent node: #3 Conv .model_1/conv2_1/Conv2D., tensor .model_1/conv2_1/BiasAdd:0., on reference: its own error" out.txt'
check "auto: a note lists the 5 keys renamed" \
  'grep -q "note: renamed 5 golden keys of .golden.npz. to the model.s tensor names (--golden-names suffix): .model/conv1/BiasAdd:0. -> .model_1/conv1_1/BiasAdd:0." err.txt'
check "auto: a note says rank 4 took (0,3,1,2) for the 4 NHWC tensors" \
  'grep -q "note: transposed 4 golden tensors of .golden.npz. to the model.s axis order (--golden-layout auto): rank 4 by (0,3,1,2) (channels-last to channels-first), 4 tensors" err.txt'

"$bin" run bad.onnx --load-inputs in.npz --backends reference --load-outputs golden.npz \
  --layerwise --save-repro - --golden-names suffix --golden-layout auto --json >out.json 2>err.txt
check "--json: golden_mapping says what was renamed and transposed" \
  '/usr/bin/python3 -c "
import json; m = json.load(open(\"out.json\"))[\"golden_mapping\"]
assert (m[\"names\"], m[\"layout\"]) == (\"suffix\", \"auto\"), m
assert len(m[\"renamed\"]) == 5 and m[\"transposed\"][0][\"perm\"] == [0, 3, 1, 2], m
assert len(m[\"transposed\"][0][\"tensors\"]) == 4 and len(m[\"notes\"]) == 2, m
"'

run bad.onnx --load-outputs golden.npz --layerwise --save-repro - --golden-names suffix \
  --golden-layout nhwc
check "nhwc: the same first divergent node" \
  '[ $rc = 1 ] && grep -q "first divergent node: #3 Conv .model_1/conv2_1/Conv2D." out.txt'

run ok.onnx --load-outputs golden.npz --layerwise --save-repro - --golden-names suffix \
  --golden-layout auto
check "the unchanged model agrees with TensorFlow's values (exit 0)" '[ $rc = 0 ]'

"$bin" run ok.onnx --load-inputs in.npz --backends reference --golden-layout auto >out.txt 2>err.txt
check "without golden values the flags say they do nothing" \
  'grep -q "note: --golden-names and --golden-layout fit golden values (--load-outputs) to the model; none are given" err.txt'
run ok.onnx --load-outputs golden.npz --layerwise --golden-layout nchw
check "an unknown --golden-layout is a usage error listing the choices" \
  '[ $rc = 2 ] && grep -q "golden-layout .nchw. is not one of as-is, auto, nhwc" err.txt'
run ok.onnx --load-outputs golden.npz --layerwise --golden-names prefix
check "an unknown --golden-names is a usage error listing the choices" \
  '[ $rc = 2 ] && grep -q "golden-names .prefix. is not one of exact, suffix" err.txt'
run ok.onnx --load-outputs ambiguous.npz --layerwise --golden-names suffix
check "a key ending two tensors' names is refused, naming them" \
  '[ $rc = 2 ] && grep -q "holds .Relu:0., whose name ends the names of 2 tensors of the model (--golden-names suffix): .model_1/conv1_1/Relu:0., .model_1/conv2_1/Relu:0." err.txt'
exit $fail
