"""onnxdbg.tf.diagnose_conversion with TensorFlow and tf2onnx from PyPI (make test-tf; skipped
where TensorFlow is missing, as with Debian's python3 in make test): a Keras model whose
tf.math.cumsum tf2onnx leaves unconverted at opset 9 and converts at opset 11, and onnxdbg lint
naming CumSum, opset 11 and the re-convert command on the opset-9 file."""

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")
pytest.importorskip("tf2onnx")

import onnxdbg  # noqa: E402


def cumsum_model():
    """x[1, 8] -> Dense(8) -> cumsum over the features -> y, seeded weights."""
    tf.random.set_seed(0)
    x = tf.keras.Input(shape=(8,), name="x")
    h = tf.keras.layers.Dense(8, name="dense")(x)
    y = tf.keras.layers.Lambda(lambda t: tf.math.cumsum(t, axis=1), name="running_sum")(h)
    return tf.keras.Model(x, y, name="cumsum_net")


def test_cumsum_unconverted_at_9_converted_at_11(tmp_path):
    model = cumsum_model()
    sig = (tf.TensorSpec((1, 8), tf.float32, name="x"),)
    d = onnxdbg.tf.diagnose_conversion(model, opsets=(9, 11), input_signature=sig)
    by = {a.opset: a for a in d.attempts}
    assert by[9].outcome == "unconverted ops", str(d)
    assert [u.op_type for u in by[9].unsupported_ops] == ["Cumsum"], str(d)
    assert by[11].outcome == "ok", str(d)
    assert d.min_opset == 11 and d.fixed_at == 11
    assert "running_sum" in d.unsupported_ops[0].node
    text = str(d)
    assert "opset  9: leaves Cumsum unconverted" in text and "--opset 11" in text
    assert d.to_json()["min_opset"] == 11

    # The file tf2onnx writes at opset 9: lint names ONNX's CumSum, opset 11 and the command.
    import tf2onnx
    path = tmp_path / "cumsum9.onnx"
    tf2onnx.convert.from_keras(model, input_signature=sig, opset=9, output_path=str(path))
    findings = [f for f in onnxdbg.lint(str(path)).findings if f["rule"] == "unconverted_op"]
    assert findings, "lint found no unconverted op"
    assert "CumSum" in findings[0]["message"] and "11" in findings[0]["message"]
    assert "tf2onnx.convert" in findings[0]["message"]


def test_a_model_that_converts_everywhere():
    x = tf.keras.Input(shape=(4,), name="x")
    model = tf.keras.Model(x, tf.keras.layers.Dense(2, name="d")(x), name="plain")
    d = onnxdbg.tf.diagnose_conversion(model, opsets=(13, 17),
                                       input_signature=(tf.TensorSpec((1, 4), tf.float32),))
    assert [a.outcome for a in d.attempts] == ["ok", "ok"]
    assert d.ok and d.min_opset == 13 and d.unsupported_ops == []
    assert "converts at every opset from 13" in str(d)


def test_bad_opsets_raise():
    with pytest.raises(ValueError):
        onnxdbg.tf.diagnose_conversion(lambda x: x, opsets=())
