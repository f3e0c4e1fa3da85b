"""bench/python_api.py: the Python package's costs (issue 16), run by `make bench` with
PYTHONPATH=<build>/python and Debian's /usr/bin/python3 (torch, torchvision, onnx).

1. Passing a 100 MB input array: the time onnxdbg.run spends outside the model's load and run
   (binding, input checks, array conversions) on a ReduceSum model, against one copy of the
   array (target: less than one copy; a strided array, which must be copied, for contrast).
2. onnxdbg.torch.compare on resnet18 (random weights, 1x3x224x224) against the work it cannot
   avoid, measured side by side in this process: torch.onnx.export + one torch forward + one
   reference run of the exported model (target: at most 2x).
3. With --tf (run by `make bench` in BUILD/tf-venv, where `make test-tf` installed TensorFlow and
   tf2onnx): onnxdbg.tf.compare on a Keras MobileNetV2 (96x96, seeded weights and BatchNorm
   statistics) against tf2onnx's conversion + one TensorFlow forward + one reference run of the
   converted model (target: at most 2x); and the same comparison of a given conversion with one
   depthwise conv's weights changed (isolation of every divergent layer included).
"""

import io
import time

import numpy as np


def input_passing() -> None:
    import onnx
    from onnx import TensorProto, helper

    import onnxdbg

    n = 25 * 1024 * 1024  # 100 MiB of float32
    graph = helper.make_graph(
        [helper.make_node("ReduceSum", ["x"], ["s"], keepdims=0)], "sum",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [n])],
        [helper.make_tensor_value_info("s", TensorProto.FLOAT, [])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    m = onnxdbg.load(model)
    x = np.ones(n, dtype=np.float32)

    def call(arr):
        """(wall s, the library's load + inference s) of one run."""
        t0 = time.perf_counter()
        r = onnxdbg._core.run_backend(m.path, "reference", {"x": arr}, 1, [], [], False, 1 << 31,
                                      None)
        wall = time.perf_counter() - t0
        assert abs(float(r["outputs"]["s"]) - n) < n * 1e-3
        return wall, r["load_seconds"] + r["run_seconds"]

    call(x)  # warm-up
    wall, inner = min(call(x) for _ in range(3))
    t0 = time.perf_counter()
    y = x.copy()
    t_copy = time.perf_counter() - t0
    del y
    strided = np.ones(2 * n, dtype=np.float32)[::2]  # not contiguous: the binding copies it
    wall_s, inner_s = min(call(strided) for _ in range(3))
    print(f"100 MiB input, ReduceSum on the reference: onnxdbg.run {wall * 1e3:.1f} ms, of which "
          f"{(wall - inner) * 1e3:.1f} ms outside the model's load and run (the binding, input "
          f"checks, conversions); one copy of the array: {t_copy * 1e3:.1f} ms -> passing it "
          f"costs {(wall - inner) / t_copy:.2f} copies (target < 1); a strided array, which the "
          f"binding must copy: {(wall_s - inner_s) / t_copy:.2f} copies")


def torch_compare() -> None:
    try:
        import torch
        import torchvision
    except ImportError:
        print("torch/torchvision not importable: skipping the onnxdbg.torch benchmark")
        return
    import onnxdbg
    try:
        import onnxdbg.torch as odt
    except ImportError as e:
        print(f"onnxdbg.torch not importable ({e}): skipping")
        return
    torch.manual_seed(0)
    model = torchvision.models.resnet18(weights=None).eval()
    x = torch.randn(1, 3, 224, 224)

    def baseline() -> float:
        t0 = time.perf_counter()
        buf = io.BytesIO()
        torch.onnx.export(model, (x,), buf, opset_version=17)
        with torch.no_grad():
            model(x)
        exported = onnxdbg.load(buf.getvalue())
        onnxdbg.run(exported, {exported.inputs[0].name: x.numpy()}, progress=False)
        return time.perf_counter() - t0

    def ours() -> float:
        t0 = time.perf_counter()
        r = odt.compare(model, (x,))
        assert r.agree, str(r)
        return time.perf_counter() - t0

    base = min(baseline() for _ in range(2))
    mine = min(ours() for _ in range(2))
    print(f"onnxdbg.torch.compare resnet18 1x3x224x224: {mine:.2f} s; export + torch forward + "
          f"reference run: {base:.2f} s; ratio {mine / base:.2f}x (target <= 2x)")


def tf_compare() -> None:
    import os
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import onnx
    import tensorflow as tf
    import tf2onnx
    from onnx import numpy_helper

    import onnxdbg
    keras = tf.keras
    keras.utils.set_random_seed(0)
    model = keras.applications.MobileNetV2(input_shape=(96, 96, 3), weights=None)
    rng = np.random.default_rng(0)
    for layer in model.layers:
        if isinstance(layer, keras.layers.BatchNormalization):
            shapes = [w.shape for w in layer.get_weights()]
            layer.set_weights([rng.uniform(0.5, 1.5, shapes[0]).astype("f"),
                               rng.normal(0, 0.1, shapes[1]).astype("f"),
                               rng.normal(0, 0.1, shapes[2]).astype("f"),
                               rng.uniform(0.5, 1.5, shapes[3]).astype("f")])
    x = rng.standard_normal((1, 96, 96, 3)).astype(np.float32)
    spec = (tf.TensorSpec(x.shape, tf.float32, name="input"),)

    def baseline() -> float:
        t0 = time.perf_counter()
        proto, _ = tf2onnx.convert.from_keras(model, input_signature=spec)
        model(x, training=False)
        onnxdbg.run(proto.SerializeToString(), {"input": x}, progress=False)
        return time.perf_counter() - t0

    def ours() -> float:
        t0 = time.perf_counter()
        r = onnxdbg.tf.compare(model, x)
        assert r.agree, str(r)
        return time.perf_counter() - t0

    baseline()  # warm-up: TensorFlow's first trace
    base = min(baseline() for _ in range(2))
    mine = min(ours() for _ in range(2))
    print(f"onnxdbg.tf.compare MobileNetV2 1x96x96x3: {mine:.2f} s; tf2onnx conversion + "
          f"TensorFlow forward + reference run: {base:.2f} s; ratio {mine / base:.2f}x "
          f"(target <= 2x)")
    proto, _ = tf2onnx.convert.from_keras(model, input_signature=spec)
    node = next(n for n in proto.graph.node if n.name.endswith("block_3_depthwise_1/depthwise"))
    init = next(t for t in proto.graph.initializer if t.name == node.input[1])
    init.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(init) * np.float32(1.2),
                                          init.name))
    data = proto.SerializeToString()
    t0 = time.perf_counter()
    r = onnxdbg.tf.compare(model, x, onnx_model=data)
    changed = time.perf_counter() - t0
    assert r.first_divergent_layer == "block_3_depthwise", str(r)
    failing = sum(row.passed is False for row in r.layers)
    t0 = time.perf_counter()
    onnxdbg.run(data, {"input": x}, progress=False)
    one_run = time.perf_counter() - t0
    print(f"  a given conversion with block_3_depthwise's weights changed: {changed:.2f} s "
          f"({failing} divergent layer outputs isolated; one reference run {one_run:.2f} s), "
          f"first divergent layer {r.first_divergent_layer}")


if __name__ == "__main__":
    import sys
    if "--tf" in sys.argv:
        tf_compare()
    else:
        input_passing()
        torch_compare()
