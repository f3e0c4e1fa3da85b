"""Fixtures of the Python package's tests: small models written with ONNX's own helper (so a
reader sees the graph), the real third-party models, and the CLI built beside the package."""

import os

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper  # noqa: E402


@pytest.fixture
def cli() -> str:
    """The onnxdbg executable of the build the package comes from."""
    path = os.path.join(os.environ.get("ONNXDBG_BINARY_DIR", "build"), "onnxdbg")
    if not os.path.isfile(path):
        pytest.skip("the onnxdbg CLI is not built beside the package")
    return path


@pytest.fixture
def models_dir() -> str:
    """Folder of the real third-party models (make models)."""
    d = os.environ.get("ONNXDBG_MODELS", "third_party/models")
    if not os.path.isdir(d):
        pytest.skip("the third-party models are not fetched (make models)")
    return d


def mlp_model(opset: int = 17):
    """x[2,4] -> MatMul(W[4,3]) + b -> Relu -> 'y'; the intermediate tensors 'mm' and 'pre'."""
    rng = np.random.default_rng(0)
    w = rng.standard_normal((4, 3)).astype(np.float32)
    b = rng.standard_normal(3).astype(np.float32)
    graph = helper.make_graph(
        [
            helper.make_node("MatMul", ["x", "W"], ["mm"], name="matmul"),
            helper.make_node("Add", ["mm", "b"], ["pre"], name="add"),
            helper.make_node("Relu", ["pre"], ["y"], name="relu"),
        ],
        "mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 3])],
        [onnx.numpy_helper.from_array(w, "W"), onnx.numpy_helper.from_array(b, "b")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                              producer_name="onnxdbg-tests")
    model.ir_version = 8
    return model, w, b


@pytest.fixture
def mlp(tmp_path):
    """(path of the MLP model, W, b)."""
    model, w, b = mlp_model()
    path = tmp_path / "mlp.onnx"
    onnx.save(model, str(path))
    return str(path), w, b
