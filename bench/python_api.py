"""bench/python_api.py: the Python package's costs (issue 16), run by `make bench` with
PYTHONPATH=<build>/python and Debian's /usr/bin/python3 (torch, torchvision, onnx).

1. Passing a 100 MB input array: peak memory and time of onnxdbg.run on a ReduceSum model
   (1 float out) against one copy of the array (target: less than one extra copy).
2. onnxdbg.torch.compare on resnet18 (random weights, 1x3x224x224) against the work it cannot
   avoid, measured side by side in this process: torch.onnx.export + one torch forward + one
   reference run of the exported model (target: at most 2x).
"""

import io
import resource
import time

import numpy as np


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


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
    onnxdbg.run(m, {"x": x}, progress=False)  # warm-up
    before = peak_rss_mb()
    t0 = time.perf_counter()
    out = onnxdbg.run(m, {"x": x}, progress=False)
    t_run = time.perf_counter() - t0
    grown = peak_rss_mb() - before
    assert abs(float(out["s"]) - n) < n * 1e-3
    t0 = time.perf_counter()
    y = x.copy()
    t_copy = time.perf_counter() - t0
    del y
    print(f"100 MiB input: onnxdbg.run (ReduceSum on the reference) {t_run * 1e3:.1f} ms, "
          f"peak RSS grew {grown:.1f} MiB; one copy of the array: {t_copy * 1e3:.1f} ms, "
          f"100.0 MiB -> {grown / 100.0:.2f} copies (target < 1)")


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


if __name__ == "__main__":
    input_passing()
    torch_compare()
