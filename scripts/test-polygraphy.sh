#!/usr/bin/env bash
# test-polygraphy.sh BUILD: onnxdbg's Polygraphy JSON files against Polygraphy itself (PyPI's
# polygraphy, numpy, onnx, onnxruntime in a venv of the default python3 kept in
# BUILD/polygraphy-venv; a download, so this runs apart from `make test`, as `make
# test-polygraphy`). Both directions: onnxdbg's --save-inputs/--save-outputs read by
# RunResults.load and `polygraphy run --load-inputs/--load-outputs`, and Polygraphy's files
# (its layerwise outputs merged by `polygraphy data to-input` included) read by onnxdbg.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "${1:-$ROOT/build}" && pwd)
bin="$BUILD/onnxdbg"
venv=$(bash "$ROOT/scripts/polygraphy-venv.sh" "$BUILD")
py="$venv/bin/python"
"$py" -c 'import polygraphy, onnxruntime; print("test-polygraphy: polygraphy", polygraphy.__version__, "onnxruntime", onnxruntime.__version__)'
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
set +e  # each check below reports its own failure
cd "$tmp"
fail=0
check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi; }

# y = Relu(x) * 2 and z = x + 1: two outputs, one intermediate.
"$py" - <<'PY'
import numpy as np, onnx
from onnx import TensorProto, helper, numpy_helper
g = helper.make_graph(
    [helper.make_node("Relu", ["x"], ["t"]), helper.make_node("Mul", ["t", "two"], ["y"]),
     helper.make_node("Add", ["x", "one"], ["z"])], "m",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3]),
     helper.make_tensor_value_info("z", TensorProto.FLOAT, [2, 3])],
    [numpy_helper.from_array(np.array([2.0], np.float32), "two"),
     numpy_helper.from_array(np.array([1.0], np.float32), "one")])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
m.ir_version = 8
onnx.save(m, "m.onnx")
PY

# --- onnxdbg writes, Polygraphy reads ------------------------------------------------------------
out=$("$bin" run m.onnx --backends reference,onnxruntime --iterations 2 --save-inputs in.json --save-outputs out.json 2>&1)
rc=$?
check "onnxdbg run --save-inputs/--save-outputs .json" '[ $rc -eq 0 ]'
out=$("$py" - <<'PY' 2>&1
import numpy as np
from polygraphy.comparator import RunResults
from polygraphy.json import load_json
inputs = load_json("in.json")
assert isinstance(inputs, list) and len(inputs) == 2, inputs
results = RunResults.load("out.json")
assert list(results.keys()) == ["reference", "onnxruntime"], list(results.keys())
for runner, iterations in results.items():
    assert len(iterations) == 2, (runner, len(iterations))
    for feed, it in zip(inputs, iterations):
        x = feed["x"]
        assert x.dtype == np.float32 and x.shape == (2, 3), (x.dtype, x.shape)
        assert it.runner_name == runner, it.runner_name
        assert sorted(it.keys()) == ["y", "z"], list(it.keys())
        np.testing.assert_allclose(it["y"], np.maximum(x, 0) * 2, rtol=1e-6)
        np.testing.assert_allclose(it["z"], x + 1, rtol=1e-6)
print("RunResults.load: 2 runners x 2 iterations match numpy")
PY
)
rc=$?
echo "$out"
check "Polygraphy's RunResults.load and load_json read onnxdbg's files" '[ $rc -eq 0 ] && grep -q "match numpy" <<<"$out"'
out=$("$venv/bin/polygraphy" run m.onnx --onnxrt --load-inputs in.json --load-outputs out.json 2>&1); rc=$?
echo "$out" | tail -3
check "polygraphy run --load-inputs/--load-outputs onnxdbg's files passes" '[ $rc -eq 0 ] && grep -q "PASSED" <<<"$out"'

# --- Polygraphy writes, onnxdbg reads ------------------------------------------------------------
"$venv/bin/polygraphy" run m.onnx --onnxrt --save-inputs pin.json --save-outputs pout.json >/dev/null 2>&1
out=$("$bin" run m.onnx --backends reference --load-inputs pin.json --load-outputs pout.json 2>&1); rc=$?
echo "$out" | tail -1
check "onnxdbg reads Polygraphy's inputs and RunResults" '[ $rc -eq 0 ] && grep -q "^AGREE" <<<"$out"'
"$venv/bin/polygraphy" run m.onnx --onnxrt --load-inputs pin.json --onnx-outputs mark all \
  --save-outputs lw.json >/dev/null 2>&1
# `polygraphy data to-input` is `data merge` since Polygraphy 0.50.
merge=to-input
"$venv/bin/polygraphy" data merge --help >/dev/null 2>&1 && merge=merge
"$venv/bin/polygraphy" data $merge pin.json lw.json -o merged.json >/dev/null 2>&1
out=$("$bin" run m.onnx --backends reference,onnxruntime --load-inputs merged.json 2>&1); rc=$?
echo "$out" | grep "note" || true
check "--load-inputs of 'polygraphy data merge' with layerwise outputs: ignored names, noted" \
  '[ $rc -eq 0 ] && grep -q "ignored, as Polygraphy ignores them" <<<"$out" && grep -q "'"'"'t'"'"'" <<<"$out"'

exit $fail
