"""The Python package over the library: load, run, compare, lint, inspect, diff, extract,
reduce and view, on models written with ONNX's helper and on the real third-party models."""

import gc
import json
import importlib.util
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

import onnxdbg
from conftest import mlp_model

onnx = pytest.importorskip("onnx")


def expected_mlp(x, w, b):
    mm = x @ w
    pre = mm + b
    return mm, pre, np.maximum(pre, 0)


# --- load -----------------------------------------------------------------------------------------


def test_load_from_path_bytes_and_proto(mlp):
    path, _, _ = mlp
    for source in (path, open(path, "rb").read(), onnx.load(path)):
        m = onnxdbg.load(source)
        assert [v.name for v in m.inputs] == ["x"]
        assert m.inputs[0].dtype == np.float32
        assert m.inputs[0].shape == ("batch", 4)
        assert m.outputs[0].shape == ("batch", 3)
        assert m.opsets == {"ai.onnx": 17}
        assert [(n.name, n.op_type) for n in m.nodes] == [
            ("matmul", "MatMul"), ("add", "Add"), ("relu", "Relu")]
        assert m.nodes[1].inputs == ("mm", "b")
        assert onnx.load_from_string(m.to_bytes()) == onnx.load(path)


@pytest.mark.parametrize("order", ["onnx, torch, onnxdbg", "onnxdbg, torch, onnx"])
def test_debians_onnx_and_torch_live_beside_onnxdbg(mlp, order):
    """onnxdbg links ONNX 1.23 under the namespace onnx_onnxdbg, so Debian's onnx 1.12 (which
    PyTorch loads too) registers its own onnx-ml.proto beside it: either import order works, and
    both read the same model in one process."""
    path, _, _ = mlp
    if importlib.util.find_spec("torch") is None:  # a bare venv (make test-wheel): onnx alone
        order = order.replace(" torch,", "")
    code = (f"import sys; import {order}; m = onnxdbg.load(sys.argv[1]); "
            "onnx.checker.check_model(onnx.load(sys.argv[1])); "
            "print(len(m.nodes), len(onnx.load(sys.argv[1]).graph.node))")
    done = subprocess.run([sys.executable, "-c", code, path], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["3", "3"]


def test_model_from_bytes_leaves_no_file(mlp):
    path, _, _ = mlp
    m = onnxdbg.load(open(path, "rb").read())
    folder = os.path.dirname(m.path)
    assert os.path.isfile(m.path)
    del m
    gc.collect()
    assert not os.path.exists(folder)


def test_load_errors_are_one_sentence(tmp_path):
    with pytest.raises(onnxdbg.NotFoundError, match="nothing.onnx"):
        onnxdbg.load(str(tmp_path / "nothing.onnx"))
    with pytest.raises(onnxdbg.ModelError):
        onnxdbg.load(b"\x08\x07garbage that is no protobuf \xff\xff\xff")
    with pytest.raises(TypeError):
        onnxdbg.load(42)
    assert issubclass(onnxdbg.NotFoundError, onnxdbg.UsageError)
    assert issubclass(onnxdbg.ModelError, onnxdbg.Error)


# --- run ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", ["reference", "onnxruntime"])
def test_run_matches_numpy(mlp, backend):
    path, w, b = mlp
    x = np.random.default_rng(1).standard_normal((5, 4)).astype(np.float32)
    out = onnxdbg.run(path, {"x": x}, backend=backend)
    assert list(out) == ["y"]
    assert out["y"].dtype == np.float32 and out["y"].shape == (5, 3)
    np.testing.assert_allclose(out["y"], expected_mlp(x, w, b)[2], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("backend", ["reference", "onnxruntime"])
def test_run_intermediates(mlp, backend):
    path, w, b = mlp
    x = np.random.default_rng(2).standard_normal((2, 4)).astype(np.float32)
    out = onnxdbg.run(path, {"x": x}, backend=backend, intermediates=True)
    assert set(out) == {"mm", "pre", "y"}
    mm, pre, y = expected_mlp(x, w, b)
    np.testing.assert_allclose(out["mm"], mm, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out["pre"], pre, rtol=1e-5, atol=1e-6)


def test_run_generates_inputs_like_the_cli(mlp):
    path, _, _ = mlp
    a = onnxdbg.run(path, input_shapes={"x": (3, 4)}, seed=7, intermediates=True)
    b = onnxdbg.run(path, input_shapes={"x": (3, 4)}, seed=7, intermediates=True)
    c = onnxdbg.run(path, input_shapes={"x": (3, 4)}, seed=8, intermediates=True)
    assert a["y"].shape == (3, 3)
    np.testing.assert_array_equal(a["mm"], b["mm"])
    assert not np.array_equal(a["mm"], c["mm"])


def test_run_arrays_in_and_out(mlp):
    path, w, b = mlp
    x = np.asfortranarray(np.arange(8, dtype=np.float32).reshape(2, 4))  # not C order: copied
    out = onnxdbg.run(path, {"x": x})["y"]
    np.testing.assert_allclose(out, expected_mlp(np.ascontiguousarray(x), w, b)[2], rtol=1e-5)
    # The output owns its buffer through its base (the library's tensor), no copy made.
    assert out.base is not None and out.flags.c_contiguous
    big = np.ones((4096, 4), dtype=np.float32)
    before = sys.getrefcount(big)
    onnxdbg.run(path, {"x": big})
    gc.collect()
    assert sys.getrefcount(big) == before  # the adopted buffer was released


def test_run_errors(mlp):
    path, _, _ = mlp
    with pytest.raises(onnxdbg.UsageError, match="x"):
        onnxdbg.run(path, {"x": np.zeros((2, 5), np.float32)})  # static dim 4
    with pytest.raises(onnxdbg.UsageError):
        onnxdbg.run(path, {"x": np.zeros((2, 4), np.int64)})  # wrong dtype
    with pytest.raises(onnxdbg.Error, match="nosuchbackend"):
        onnxdbg.run(path, backend="nosuchbackend")


def test_a_crashing_backend_raises_and_python_goes_on(mlp):
    path, _, _ = mlp
    x = np.ones((2, 4), np.float32)
    with pytest.raises(onnxdbg.BackendError, match="crashed with SIGSEGV"):
        onnxdbg.run(path, {"x": x}, backend="onnxruntime", options={"debug_crash": "run"})
    r = onnxdbg.compare(path, backends=["reference", "onnxruntime:debug_crash=run"],
                        inputs={"x": x})
    assert r.verdict == "error"  # a failed row, not a crashed interpreter
    assert "crashed with SIGSEGV" in str(r)
    assert onnxdbg.run(path, {"x": x}, backend="onnxruntime")["y"].shape == (2, 3)


# --- compare --------------------------------------------------------------------------------------


def test_compare_prints_what_the_cli_prints(mlp, cli):
    path, _, _ = mlp
    r = onnxdbg.compare(path, input_shapes={"x": (2, 4)}, progress=False)
    assert r.verdict == "agree" and r.agree
    cli_out = subprocess.run([cli, "run", path, "--input-shapes", "x:2x4"], capture_output=True,
                             text=True, check=False)
    assert cli_out.returncode == 0
    ours, theirs = str(r).splitlines(), cli_out.stdout.splitlines()
    assert ours[-1] == theirs[-1]  # the verdict line
    # The tables are the same but for the timings measured in each run.
    timing = lambda w: any(c.isdigit() for c in w) or set(w) == {"-"} or w in ("s", "ms", "us")
    strip = lambda lines: [" ".join(w for w in l.split() if not timing(w)) for l in lines]
    assert strip(ours) == strip(theirs)
    j = r.to_json()
    assert j["verdict"] == "agree"
    assert {c["backend"] for c in r.comparisons} >= {"onnxruntime"}


def test_compare_with_golden_outputs(mlp):
    path, w, b = mlp
    x = np.random.default_rng(3).standard_normal((2, 4)).astype(np.float32)
    y = expected_mlp(x, w, b)[2]
    good = onnxdbg.compare(path, backends=["reference", "onnxruntime"], inputs={"x": x},
                           golden={"y": y}, atol=1e-5, rtol=1e-4)
    assert good.agree, str(good)
    bad = onnxdbg.compare(path, backends="onnxruntime", inputs={"x": x},
                          golden={"y": y + 0.5})
    assert bad.verdict == "disagree"
    assert not any(c["pass"] for c in bad.comparisons)


def tf2onnx_like_model(w1, w2):
    """A model as tf2onnx writes a Keras one: NHWC input 'input_1', a Transpose to NCHW, two 1x1
    Conv+Relu layers in scopes the converter numbered ('model_1/conv1_1/...'), the graph output
    'Identity:0'."""
    from onnx import TensorProto, helper, numpy_helper

    s = "model_1/"
    nodes = [helper.make_node("Transpose", ["input_1"], [s + "t:0"], perm=[0, 3, 1, 2])]
    inits = []
    prev = s + "t:0"
    for i, w in ((1, w1), (2, w2)):
        scope = f"{s}conv{i}_1/"
        inits.append(numpy_helper.from_array(w.T.reshape(*w.T.shape, 1, 1).copy(),
                                             scope + "kernel"))
        nodes += [helper.make_node("Conv", [prev, scope + "kernel"], [scope + "Conv2D:0"],
                                   name=scope + "Conv2D"),
                  helper.make_node("Relu", [scope + "Conv2D:0"], [scope + "Relu:0"],
                                   name=scope + "Relu")]
        prev = scope + "Relu:0"
    nodes.append(helper.make_node("Identity", [prev], ["Identity:0"]))
    graph = helper.make_graph(
        nodes, "tf", [helper.make_tensor_value_info("input_1", TensorProto.FLOAT, [1, 5, 5, 3])],
        [helper.make_tensor_value_info("Identity:0", TensorProto.FLOAT, [1, 4, 5, 5])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    return model


def test_compare_fits_a_tensorflow_dump_by_name_and_layout(tmp_path):
    """golden_names="suffix" and golden_layout="auto" (--golden-names, --golden-layout): golden
    values keyed by TensorFlow's names, NHWC, against the converted NCHW model, whose conv2 has
    one weight changed; the first divergent node is that Conv, and the result says what was
    renamed and transposed. The caller's arrays are left as they were."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal((1, 5, 5, 3)).astype(np.float32)
    w1 = rng.standard_normal((3, 4)).astype(np.float32)
    w2 = rng.standard_normal((4, 4)).astype(np.float32)
    r1 = np.maximum(x @ w1, 0)
    c2 = r1 @ w2
    golden = {"model/conv1/Relu:0": r1, "model/conv2/Conv2D:0": c2,
              "model/conv2/Relu:0": np.maximum(c2, 0), "Identity:0": np.maximum(c2, 0)}
    bad = w2.copy()
    bad[0, 0] += 1.0
    path = tmp_path / "tf.onnx"
    onnx.save(tf2onnx_like_model(w1, bad), str(path))
    # Identity:0 is a graph output, so it is transposed too: NHWC 1x5x5x4 -> NCHW 1x4x5x5.
    r = onnxdbg.compare(str(path), backends="reference", inputs={"input_1": x}, golden=golden,
                        golden_names="suffix", golden_layout="auto", layerwise=True,
                        save_repro=None, atol=1e-4, rtol=1e-4, progress=False)
    assert r.verdict == "disagree", str(r)
    assert r.first_divergent_node["tensor"] == "model_1/conv2_1/Conv2D:0"
    m = r.to_json()["golden_mapping"]
    assert (m["names"], m["layout"]) == ("suffix", "auto")
    assert {e["key"]: e["tensor"] for e in m["renamed"]} == {
        "model/conv1/Relu:0": "model_1/conv1_1/Relu:0",
        "model/conv2/Conv2D:0": "model_1/conv2_1/Conv2D:0",
        "model/conv2/Relu:0": "model_1/conv2_1/Relu:0"}
    assert m["transposed"] == [{"rank": 4, "perm": [0, 3, 1, 2], "tensors": [
        "Identity:0", "model_1/conv1_1/Relu:0", "model_1/conv2_1/Conv2D:0",
        "model_1/conv2_1/Relu:0"]}]
    notes = [text for kind, text in r.messages if kind == "note"]
    assert any(t.startswith("renamed 3 golden keys") for t in notes), notes
    assert any(t.startswith("transposed 4 golden tensors") for t in notes), notes
    assert golden["model/conv2/Relu:0"].shape == (1, 5, 5, 4)
    # The unchanged model agrees with the same dump.
    onnx.save(tf2onnx_like_model(w1, w2), str(path))
    ok = onnxdbg.compare(str(path), backends="reference", inputs={"input_1": x}, golden=golden,
                         golden_names="suffix", golden_layout="nhwc", layerwise=True,
                         atol=1e-4, rtol=1e-4, progress=False)
    assert ok.agree, str(ok)
    with pytest.raises(onnxdbg.UsageError, match="golden_layout 'nchw' is not one of as-is, "
                                                 "auto, nhwc"):
        onnxdbg.compare(str(path), backends="reference", inputs={"input_1": x}, golden=golden,
                        golden_layout="nchw", progress=False)


def test_compare_html(mlp, tmp_path):
    path, _, _ = mlp
    r = onnxdbg.compare(path, input_shapes={"x": (1, 4)}, layerwise=True)
    assert r.layerwise and all(row["pass"] for row in r.layerwise)
    assert r.first_divergent_node is None
    page = tmp_path / "run.html"
    r.to_html(page)
    assert "matmul" in page.read_text()


def test_compare_limits(mlp, tmp_path):
    """timeout= and max_memory= are --timeout and --max-memory (issue 17): an input over the
    limit is a UsageError naming it; a Loop of 2^62 trips is a failed row "timed out after 1 s"."""
    from onnx import TensorProto, helper, numpy_helper

    path, _, _ = mlp
    with pytest.raises(onnxdbg.UsageError,
                       match=r"input 'x' float32\[2,4\] needs 32 B, more than the memory limit"):
        onnxdbg.compare(path, input_shapes={"x": (2, 4)}, max_memory=16, progress=False)
    body = helper.make_graph(
        [helper.make_node("Identity", ["c_in"], ["c_out"]),
         helper.make_node("Identity", ["a_in"], ["a_out"])],
        "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("c_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("a_in", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("c_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("a_out", TensorProto.FLOAT, [1])])
    graph = helper.make_graph(
        [helper.make_node("Loop", ["trips", "cond", "x"], ["y"], name="loop", body=body)],
        "spin",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])],
        [numpy_helper.from_array(np.array(2**62, dtype=np.int64), "trips"),
         numpy_helper.from_array(np.array(True), "cond")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    spin = tmp_path / "spin.onnx"
    onnx.save(model, str(spin))
    r = onnxdbg.compare(str(spin), backends="reference", timeout=1, progress=False)
    assert r.verdict == "error"
    assert "timed out after 1 s" in str(r)


# --- lint, inspect, diff, extract, view -----------------------------------------------------------


def test_lint_finds_an_undefined_input(tmp_path):
    model, _, _ = mlp_model()
    model.graph.node[1].input[0] = "missing_tensor"
    path = tmp_path / "broken.onnx"
    onnx.save(model, str(path))
    r = onnxdbg.lint(str(path))
    assert r.has_errors
    assert any("missing_tensor" in f["message"] for f in r.findings)
    assert "missing_tensor" in str(r)
    assert not onnxdbg.lint(mlp_model()[0]).has_errors


def test_inspect_and_diff(mlp, tmp_path):
    path, _, _ = mlp
    info = onnxdbg.inspect(path).to_json()
    assert json.dumps(info)  # plain JSON
    assert "MatMul" in str(onnxdbg.inspect(path, mode="layers"))
    assert "tensors" not in info
    tensors = onnxdbg.inspect(path, show_tensors=True).to_json()["tensors"]
    producers = {t["name"]: t["producer"] for t in tensors}
    assert all(t["type"] != "?" for t in tensors), tensors
    assert "graph input" in producers.values() and "initializer" in producers.values()
    assert any("MatMul" in p for p in producers.values())
    other, _, _ = mlp_model()
    other.graph.node[2].op_type = "Sigmoid"
    d = onnxdbg.diff(path, other)
    assert not d.identical
    assert "relu" in str(d)
    assert onnxdbg.diff(path, path).identical


def test_extract_a_subgraph(mlp):
    path, w, b = mlp
    sub = onnxdbg.extract(path, ["mm"], ["y"])
    assert [n.op_type for n in sub.nodes] == ["Add", "Relu"]
    mm = np.ones((2, 3), np.float32)
    out = onnxdbg.run(sub, {"mm": mm})
    np.testing.assert_allclose(out["y"], np.maximum(mm + b, 0), rtol=1e-6)
    with pytest.raises(onnxdbg.UsageError, match="nope"):
        onnxdbg.extract(path, ["nope"], ["y"])


def test_view_writes_a_page(mlp, tmp_path):
    path, _, _ = mlp
    page = tmp_path / "v.html"
    onnxdbg.view(path, page, highlight=["add"])
    assert page.stat().st_size > 1000


# --- reduce ---------------------------------------------------------------------------------------


def test_reduce_with_a_python_oracle(mlp):
    path, _, _ = mlp
    calls = []

    def still_fails(model_bytes: bytes) -> bool:
        calls.append(1)
        return any(n.op_type == "Add" for n in onnx.load_from_string(model_bytes).graph.node)

    r = onnxdbg.reduce(path, still_fails, input_shapes={"x": (2, 4)}, progress=False)
    assert [n.op_type for n in r.nodes] == ["Add"], str(r)
    assert calls
    assert "Add" in str(r)
    assert r.stopped == ""


def test_reduce_oracle_errors_stop_it(mlp):
    path, _, _ = mlp

    def broken(_: bytes) -> bool:
        raise RuntimeError("oracle exploded")

    with pytest.raises(onnxdbg.Error, match="oracle exploded"):
        onnxdbg.reduce(path, broken, input_shapes={"x": (2, 4)}, progress=False)
    with pytest.raises(onnxdbg.UsageError):
        onnxdbg.reduce(path)


def test_reduce_det_model_conv_transpose_to_one_node(models_dir):
    det = os.path.join(models_dir, "ch_PP-OCRv4_det_infer.onnx")
    if not os.path.isfile(det):
        pytest.skip("ch_PP-OCRv4_det_infer.onnx not fetched")

    def has_conv_transpose(model_bytes: bytes) -> bool:
        return any(n.op_type == "ConvTranspose"
                   for n in onnx.load_from_string(model_bytes).graph.node)

    r = onnxdbg.reduce(det, has_conv_transpose, mode="bisect",
                       input_shapes={"x": (1, 3, 320, 320)}, progress=False)
    assert [n.op_type for n in r.nodes] == ["ConvTranspose"], str(r)


def test_reduce_det_model_to_the_clip_opencv_refuses(models_dir):
    # OpenCV 4.6 refuses the det model's 3-input Clip; the built-in oracle keeps that failure
    # (its signature) in every mode, with and without any_failure.
    det = os.path.join(models_dir, "ch_PP-OCRv4_det_infer.onnx")
    if not os.path.isfile(det):
        pytest.skip("ch_PP-OCRv4_det_infer.onnx not fetched")
    for mode, any_failure in (("full", False), ("bisect", False), ("full", True)):
        r = onnxdbg.reduce(det, fail_on="error", backends=("reference", "opencv"), mode=mode,
                           any_failure=any_failure, input_shapes={"x": (1, 3, 320, 320)},
                           progress=False)
        assert [n.op_type for n in r.nodes] == ["Clip"], (mode, str(r))


# --- Ctrl-C ---------------------------------------------------------------------------------------


def test_keyboard_interrupt_stops_a_long_call(models_dir, tmp_path):
    det = os.path.join(models_dir, "ch_PP-OCRv4_det_infer.onnx")
    if not os.path.isfile(det):
        pytest.skip("ch_PP-OCRv4_det_infer.onnx not fetched")
    script = (
        "import sys, onnxdbg\n"
        "try:\n"
        f"    onnxdbg.compare({det!r}, layerwise=True, input_shapes={{'x': (1, 3, 640, 640)}},\n"
        "                    iterations=6, progress=lambda line: print(line, flush=True))\n"
        "except KeyboardInterrupt:\n"
        "    print('interrupted', flush=True)\n"
        "    sys.exit(3)\n"
    )
    env = dict(os.environ, TMPDIR=str(tmp_path))
    p = subprocess.Popen([sys.executable, "-c", script], env=env, stdout=subprocess.PIPE,
                         text=True)
    for line in p.stdout:  # the layerwise pass of the first sample has begun
        if "batch" in line:
            break
    t0 = time.time()
    p.send_signal(signal.SIGINT)
    out, _ = p.communicate(timeout=60)
    assert p.returncode == 3, out
    assert "interrupted" in out
    assert time.time() - t0 < 30
    assert os.listdir(tmp_path) == []  # no temp folder left behind
    assert processes_with_env(f"TMPDIR={tmp_path}") == []  # no worker left running


def processes_with_env(entry: str) -> list:
    """Pids of live processes whose environment holds `entry` (the workers inherit TMPDIR)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                if entry.encode() in f.read().split(b"\0"):
                    found.append(int(pid))
        except OSError:
            continue
    return found


# --- bisect_optimizers ------------------------------------------------------------------------------


def test_bisect_optimizers_finds_what_onnxruntime_disables(tmp_path):
    """The double-QDQ model of tests/cli/make_bisect_models.py: the set found, disabled on ONNX
    Runtime through compare, restores agreement (ORT's word, not onnxdbg's)."""
    here = os.path.dirname(os.path.abspath(__file__))
    subprocess.run([sys.executable, os.path.join(here, "..", "cli", "make_bisect_models.py"),
                    str(tmp_path)], check=True)
    r = onnxdbg.bisect_optimizers(tmp_path / "double_qdq.onnx", progress=False)
    assert r.outcome == "found", str(r)
    assert r.culprits and all(c in r.candidates for c in r.culprits), str(r)
    assert "FOUND: " in str(r)
    fixed = onnxdbg.compare(tmp_path / "double_qdq.onnx",
                            backends=["onnxruntime:opt=disabled",
                                      "onnxruntime:opt=all:disable=" + "+".join(r.culprits)],
                            progress=False)
    assert fixed.verdict == "agree", str(fixed)
    same = onnxdbg.bisect_optimizers(tmp_path / "relu.onnx", progress=False)
    assert same.outcome == "no_difference" and same.culprits == []
    with pytest.raises(onnxdbg.UsageError):
        onnxdbg.bisect_optimizers(tmp_path / "relu.onnx", backend="reference", progress=False)
    with pytest.raises(onnxdbg.BackendError):
        onnxdbg.bisect_optimizers(tmp_path / "custom.onnx", progress=False)


def test_the_torch_bridge_loads_on_first_use():
    """PEP 562: a bare `import onnxdbg` imports no framework, and `onnxdbg.torch` then works
    without its own import (issue 37)."""
    code = ("import sys, onnxdbg; assert 'torch' not in sys.modules, 'torch imported';"
            "import importlib.util as u; ok = u.find_spec('torch') is not None;"
            "print(callable(onnxdbg.torch.compare) if ok else 'no torch')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=dict(os.environ))
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() in ("True", "no torch"), out.stdout
    with pytest.raises(AttributeError):
        onnxdbg.no_such_bridge
