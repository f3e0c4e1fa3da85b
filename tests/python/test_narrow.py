"""ONNX's narrow element types (float8, float4, float6, int4/uint4, int2/uint2) in the Python
package: arrays of ml_dtypes' dtypes go in and come out; without ml_dtypes a narrow output is a
clear TypeError. Models are built with ONNX's helper from type numbers, which Debian's onnx 1.12
stores without knowing them."""

import io
import sys
import zipfile

import numpy as np
import pytest

import onnxdbg
from onnx import helper

try:
    import ml_dtypes
except ImportError:
    ml_dtypes = None

# Tests of narrow-type arrays need ml_dtypes (numpy has no such dtypes of its own).
needs_ml_dtypes = pytest.mark.skipif(
    ml_dtypes is None, reason="ml_dtypes is not installed (pip install ml_dtypes)")

INT4, FLOAT8E4M3FN = 22, 17


def identity_model():
    """(int4[2,3] q, float8e4m3fn[4] f) -> Identity -> (q_out, f_out)."""
    graph = helper.make_graph(
        [
            helper.make_node("Identity", ["q"], ["q_out"], name="id_q"),
            helper.make_node("Identity", ["f"], ["f_out"], name="id_f"),
        ],
        "narrow",
        [helper.make_tensor_value_info("q", INT4, [2, 3]),
         helper.make_tensor_value_info("f", FLOAT8E4M3FN, [4])],
        [helper.make_tensor_value_info("q_out", INT4, [2, 3]),
         helper.make_tensor_value_info("f_out", FLOAT8E4M3FN, [4])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)])
    model.ir_version = 11
    return model.SerializeToString()


def test_without_ml_dtypes_a_narrow_output_is_a_type_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "ml_dtypes", None)  # `import ml_dtypes` raises ImportError
    needs = r"(int4|float8_e4m3fn) needs the ml_dtypes package.*pip install ml_dtypes"
    with pytest.raises(TypeError, match=needs):
        onnxdbg.run(identity_model(), progress=False)
    m = onnxdbg.load(identity_model())
    assert m.inputs[0].dtype is None and "int4" in m.inputs[0].type


def test_save_npz_keeps_plain_arrays_as_np_savez(tmp_path):
    p = tmp_path / "plain.npz"
    onnxdbg.save_npz(p, {"x": np.arange(6, dtype=np.float32).reshape(2, 3)}, compress=True)
    with zipfile.ZipFile(p) as z:
        assert z.namelist() == ["x.npy"]
    np.testing.assert_array_equal(np.load(p)["x"], np.arange(6, dtype=np.float32).reshape(2, 3))




@needs_ml_dtypes
def test_narrow_arrays_go_in_and_come_out_as_ml_dtypes():
    q = np.array([[1, -3, 7], [-8, 0, 2]], dtype=ml_dtypes.int4)
    f = np.array([0.5, -1.75, 448, -0.0], dtype=ml_dtypes.float8_e4m3fn)
    out = onnxdbg.run(identity_model(), {"q": q, "f": f}, progress=False)
    assert out["q_out"].dtype == np.dtype("int4")
    assert out["f_out"].dtype == np.dtype("float8_e4m3fn")
    np.testing.assert_array_equal(out["q_out"].view(np.uint8), q.view(np.uint8))
    np.testing.assert_array_equal(out["f_out"].view(np.uint8), f.view(np.uint8))
    m = onnxdbg.load(identity_model())
    assert m.inputs[0].dtype == np.dtype("int4")


@needs_ml_dtypes
def test_generated_narrow_inputs_stay_in_the_types_range():
    out = onnxdbg.run(identity_model(), val_range=(-100, 1000), progress=False)
    q = out["q_out"].astype(np.float64)
    assert q.min() >= -8 and q.max() <= 7
    f = out["f_out"].astype(np.float64)
    assert f.min() >= -100 and f.max() <= 448


@needs_ml_dtypes
def test_bits_above_a_sub_byte_type_are_cleared():
    raw = np.array([[0xF1, 0x1D, 0x07], [0x08, 0x00, 0x02]], dtype=np.uint8)
    f = np.zeros(4, dtype=ml_dtypes.float8_e4m3fn)
    out = onnxdbg.run(identity_model(), {"q": raw.view(ml_dtypes.int4), "f": f}, progress=False)
    np.testing.assert_array_equal(out["q_out"].astype(np.int8), [[1, -3, 7], [-8, 0, 2]])
    assert raw[0, 0] == 0xF1  # the caller's array is left as it was


@needs_ml_dtypes
def test_save_npy_writes_the_ml_dtypes_name_numpy_reads_back(tmp_path):
    arrays = {
        "q": np.array([[1, -3, 7], [-8, 0, 2]], dtype=ml_dtypes.int4),
        "u": np.array([0, 3, 1], dtype=ml_dtypes.uint2),
        "f8": np.array([1.5, -57344, np.inf], dtype=ml_dtypes.float8_e5m2),
        "f4": np.array([-6, 0.5], dtype=ml_dtypes.float4_e2m1fn),
        "bf": np.array([1.5, -3], dtype=ml_dtypes.bfloat16),
    }
    p = tmp_path / "narrow.npz"
    onnxdbg.save_npz(p, arrays)
    back = np.load(p)
    for k, a in arrays.items():
        assert back[k].dtype == a.dtype, k
        np.testing.assert_array_equal(back[k].view(np.uint8), a.view(np.uint8))
    buf = io.BytesIO()
    one = tmp_path / "q.npy"
    onnxdbg.save_npy(one, arrays["q"])
    buf.write(one.read_bytes())
    assert b"'descr': 'int4'" in buf.getvalue()


@needs_ml_dtypes
def test_cli_reads_the_npz_and_writes_what_numpy_reads(tmp_path, cli):
    import subprocess

    model = tmp_path / "narrow.onnx"
    model.write_bytes(identity_model())
    inputs = tmp_path / "in.npz"
    q = np.array([[1, -3, 7], [-8, 0, 2]], dtype=ml_dtypes.int4)
    f = np.array([0.5, -1.75, 448, 3], dtype=ml_dtypes.float8_e4m3fn)
    onnxdbg.save_npz(inputs, {"q": q, "f": f})
    outputs = tmp_path / "out.npz"
    r = subprocess.run([cli, "run", str(model), "--backends", "reference", "--load-inputs",
                        str(inputs), "--save-outputs", str(outputs)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    back = np.load(outputs)
    names = {k.split("/")[-1]: k for k in back.files}
    assert back[names["q_out"]].dtype == np.dtype("int4")
    np.testing.assert_array_equal(back[names["q_out"]].view(np.uint8), q.view(np.uint8))
    np.testing.assert_array_equal(back[names["f_out"]].view(np.uint8), f.view(np.uint8))

    # np.save of an ml_dtypes array loses the type: the CLI says so and how to save it.
    lost = tmp_path / "lost.npz"
    np.savez(lost, q=q, f=f)
    r = subprocess.run([cli, "run", str(model), "--backends", "reference", "--load-inputs",
                        str(lost)], capture_output=True, text=True)
    assert r.returncode != 0
    assert "element type is lost" in r.stderr and "onnxdbg.save_npz" in r.stderr, r.stderr
