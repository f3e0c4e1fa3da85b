"""onnxdbg.tf.compare with TensorFlow and tf2onnx from PyPI (make test-tf; skipped where
TensorFlow is missing, as with Debian's python3 in make test): Keras Applications models with
seeded weights (MobileNetV2 at 96x96, ResNet50 at 64x64) agreeing with their tf2onnx conversion
and, with one depthwise conv's weights changed in the ONNX, that layer named as the first
divergent one with its own error; a small LSTM, a tf.cond that tf2onnx turns into If, a
subclassed model with a nested layer, and the refusals of bad input."""

import json

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")
tf2onnx = pytest.importorskip("tf2onnx")

import onnx  # noqa: E402
from onnx import numpy_helper  # noqa: E402

import onnxdbg  # noqa: E402

keras = tf.keras


def seeded_batchnorms(model, seed=0):
    """Random moving statistics, scales and shifts for every BatchNormalization (a fresh model
    has mean 0, variance 1, scale 1, shift 0: the fusions tf2onnx makes would hide nothing)."""
    rng = np.random.default_rng(seed)
    for layer in model.layers:
        if isinstance(layer, keras.layers.BatchNormalization):
            gamma, beta, mean, var = layer.get_weights()
            layer.set_weights([rng.uniform(0.5, 1.5, gamma.shape).astype("f"),
                               rng.normal(0, 0.1, beta.shape).astype("f"),
                               rng.normal(0, 0.1, mean.shape).astype("f"),
                               rng.uniform(0.5, 1.5, var.shape).astype("f")])
    return model


def convert(model, x, opset=13):
    spec = (tf.TensorSpec(x.shape, tf.float32, name="input"),)
    proto, _ = tf2onnx.convert.from_keras(model, input_signature=spec, opset=opset)
    return proto


def with_scaled_weights(proto, node_suffix, factor):
    """A copy of ``proto`` with the weights (input 1) of the node whose name ends with
    ``node_suffix`` multiplied by ``factor``; returns (the copy, that node)."""
    changed = onnx.ModelProto()
    changed.CopyFrom(proto)
    node = next(n for n in changed.graph.node if n.name.endswith(node_suffix))
    init = next(t for t in changed.graph.initializer if t.name == node.input[1])
    init.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(init) * np.float32(factor),
                                          init.name))
    return changed, node


def covered(result):
    """Layer outputs with an ONNX tensor, or fused by tf2onnx into one that has."""
    return sum(r.mapped or r.fused_into is not None for r in result.layers)


@pytest.fixture(scope="module")
def mobilenet():
    keras.utils.set_random_seed(0)
    model = seeded_batchnorms(keras.applications.MobileNetV2(input_shape=(96, 96, 3),
                                                             weights=None))
    x = np.random.default_rng(0).standard_normal((1, 96, 96, 3)).astype(np.float32)
    return model, x, convert(model, x)


def test_mobilenetv2_agrees_with_its_conversion(mobilenet):
    model, x, proto = mobilenet
    r = onnxdbg.tf.compare(model, x, onnx_model=proto)
    assert r.agree, str(r)
    assert r.first_divergent_layer is None and r.first_divergent_nodes == []
    assert covered(r) >= 0.9 * len(r.layers), str(r)
    assert sum(r.mapped for r in r.layers) >= 100
    rows = {row.path: row for row in r.layers}
    # tf2onnx fuses Conv + BatchNormalization into one Conv named after neither ("Conv__235").
    assert not rows["Conv1"].mapped and "fused by tf2onnx with bn_Conv1" in rows["Conv1"].reason
    assert rows["bn_Conv1"].mapped and rows["bn_Conv1"].passed
    assert rows["block_3_depthwise"].onnx_tensor.endswith("block_3_depthwise_1/depthwise:0")
    # 1x24x24x24 fits every permutation: the rank's permutation is taken, not identity.
    assert rows["block_1_project_BN"].passed, str(r)
    assert any("NHWC -> NCHW perm [0, 3, 1, 2]" in n for n in r.notes), r.notes
    assert r.outputs and r.outputs[0].passed
    text = str(r)
    assert text.startswith("onnxdbg.tf: Functional against its ONNX conversion (given, tf2onnx")
    assert "verdict: agree" in text
    data = r.to_json()
    json.dumps(data)
    assert data["first_divergent_layer"] is None and len(data["layers"]) == len(r.layers)


def test_a_changed_depthwise_conv_is_named_with_its_own_error(mobilenet, tmp_path):
    model, x, proto = mobilenet
    changed, node = with_scaled_weights(proto, "block_3_depthwise_1/depthwise", 1.2)
    r = onnxdbg.tf.compare(model, x, onnx_model=changed)
    assert not r.agree
    assert r.first_divergent_layer == "block_3_depthwise", str(r)
    assert r.first_divergent_nodes == [node.name]
    rows = {row.path: row for row in r.layers}
    first = rows["block_3_depthwise"]
    assert first.source == "own" and first.own_error > 1e-3 and not first.passed
    # Everything before it agrees; what comes after inherits the error.
    assert rows["block_3_expand_relu"].passed
    assert rows["block_3_depthwise_BN"].source == "inherited"
    assert rows["block_3_depthwise_BN"].own_error < 1e-4
    assert "first divergent layer: block_3_depthwise (DepthwiseConv2D)" in r.verdict_line()
    page = tmp_path / "mnv2.html"
    r.to_html(page)
    html = page.read_text()
    assert "block_3_depthwise" in html and len(html) > 10000
    assert r.overlay()["first_divergent_node"]["layer"] == "block_3_depthwise"


def test_without_isolation_the_first_row_outside_tolerance_is_named(mobilenet):
    model, x, proto = mobilenet
    changed, _ = with_scaled_weights(proto, "block_5_depthwise_1/depthwise", 0.5)
    r = onnxdbg.tf.compare(model, x, onnx_model=changed, isolate=False)
    assert r.first_divergent_layer == "block_5_depthwise"
    assert all(row.source is None for row in r.layers)


def test_resnet50_agrees():
    keras.utils.set_random_seed(1)
    model = seeded_batchnorms(keras.applications.ResNet50(input_shape=(64, 64, 3),
                                                          weights=None), seed=1)
    x = np.random.default_rng(1).standard_normal((1, 64, 64, 3)).astype(np.float32)
    r = onnxdbg.tf.compare(model, x, onnx_model=convert(model, x), atol=1e-3, rtol=1e-3)
    assert r.agree, str(r)
    assert covered(r) >= 0.9 * len(r.layers), str(r)


def test_a_small_lstm_converted_in_memory():
    keras.utils.set_random_seed(2)
    x_in = keras.Input(shape=(7, 5), name="seq")
    h = keras.layers.LSTM(6, name="lstm")(x_in)
    y = keras.layers.Dense(3, name="head")(h)
    model = keras.Model(x_in, y, name="lstm_net")
    x = np.random.default_rng(2).standard_normal((1, 7, 5)).astype(np.float32)
    r = onnxdbg.tf.compare(model, x)
    assert r.agree, str(r)
    assert r.exported and any("converted now by tf2onnx" in n for n in r.notes)
    rows = {row.path: row for row in r.layers}
    assert rows["lstm"].mapped and rows["lstm"].passed, str(r)
    assert rows["head"].mapped


def test_a_tf_cond_becomes_if_and_is_compared():
    keras.utils.set_random_seed(3)

    class Gate(keras.layers.Layer):
        def call(self, t):
            return tf.cond(tf.reduce_sum(t) > 0, lambda: t * 2.0, lambda: t - 1.0)

    x_in = keras.Input(shape=(4,), batch_size=1, name="x")
    h = keras.layers.Dense(4, name="dense")(x_in)
    g = Gate(name="gate")(h)
    model = keras.Model(x_in, keras.layers.Dense(2, name="out")(g), name="cond_net")
    x = np.random.default_rng(3).standard_normal((1, 4)).astype(np.float32)
    proto = convert(model, x)
    assert any(n.op_type == "If" for n in proto.graph.node)
    r = onnxdbg.tf.compare(model, x, onnx_model=proto)
    assert r.agree, str(r)
    rows = {row.path: row for row in r.layers}
    assert rows["gate"].mapped, str(r)


def test_a_subclassed_model_with_a_nested_layer():
    keras.utils.set_random_seed(4)

    class Block(keras.layers.Layer):
        def __init__(self, **kw):
            super().__init__(**kw)
            self.inner = keras.layers.Dense(8, activation="relu", name="inner")

        def call(self, t):
            return self.inner(t) + 1.0

    class Net(keras.Model):
        def __init__(self):
            super().__init__(name="net")
            self.block = Block(name="block")
            self.head = keras.layers.Dense(2, name="head")

        def call(self, t):
            return self.head(self.block(t))

    model = Net()
    x = np.random.default_rng(4).standard_normal((1, 6)).astype(np.float32)
    model(x)
    r = onnxdbg.tf.compare(model, x)
    assert r.agree, str(r)
    paths = [row.path for row in r.layers]
    assert paths == ["block/inner", "block", "head"], paths
    assert all(row.mapped for row in r.layers), str(r)


def test_bad_input_is_refused_before_anything_runs(mobilenet, tmp_path):
    model, x, proto = mobilenet
    with pytest.raises(onnxdbg.UsageError, match="rank"):
        onnxdbg.tf.compare(model, x[0], onnx_model=proto)
    with pytest.raises(onnxdbg.Error, match="could not load the SavedModel"):
        onnxdbg.tf.compare(str(tmp_path), x)
    with pytest.raises(onnxdbg.UsageError, match="Keras model"):
        onnxdbg.tf.compare(object(), x)
    with pytest.raises(onnxdbg.UsageError, match="atol"):
        onnxdbg.tf.compare(model, x, onnx_model=proto, atol=-1)
    with pytest.raises(onnxdbg.UsageError, match="inputs"):
        onnxdbg.tf.compare(model, [x, x], onnx_model=proto)


def test_equal_dimensions_take_the_layout_of_tf2onnxs_input_transpose():
    """1x16x16x16 fits every permutation: the Transpose tf2onnx put after the graph input says
    NHWC -> NCHW; a depthwise conv scaled by 1.2 in the ONNX is named, its neighbours are not."""
    keras.utils.set_random_seed(5)
    x_in = keras.Input(shape=(32, 32, 3), name="image")
    h = keras.layers.Conv2D(16, 3, strides=2, padding="same", use_bias=False, name="stem")(x_in)
    h = keras.layers.BatchNormalization(name="stem_bn")(h)
    h = keras.layers.ReLU(6.0, name="stem_relu")(h)
    h = keras.layers.DepthwiseConv2D(3, padding="same", use_bias=False, name="dw")(h)
    h = keras.layers.ReLU(6.0, name="dw_relu")(h)
    h = keras.layers.GlobalAveragePooling2D(name="pool")(h)
    model = keras.Model(x_in, keras.layers.Dense(10, name="logits")(h), name="small_cnn")
    model = seeded_batchnorms(model, seed=5)
    x = np.random.default_rng(5).standard_normal((1, 32, 32, 3)).astype(np.float32)
    proto = convert(model, x)
    assert onnxdbg.tf.compare(model, x, onnx_model=proto).agree
    changed, _ = with_scaled_weights(proto, "dw_1/depthwise", 1.2)
    r = onnxdbg.tf.compare(model, x, onnx_model=changed)
    assert r.first_divergent_layer == "dw", str(r)
    rows = {row.path: row for row in r.layers}
    assert rows["stem_bn"].passed and rows["stem_relu"].passed, str(r)
    assert rows["stem"].fused_into == "stem_bn"
    assert rows["pool"].source == "inherited" and rows["logits"].source == "inherited"
    assert any("NHWC -> NCHW perm [0, 3, 1, 2]" in n for n in r.notes), r.notes


def test_a_conversion_of_the_exported_savedmodel_by_the_tf2onnx_command(mobilenet, tmp_path):
    """python -m tf2onnx.convert --saved-model: node names under "StatefulPartitionedCall/", the
    graph input named after the Keras tensor, both mapped; and the SavedModel folder compared
    by its layer scopes, naming the changed depthwise conv's scope."""
    import subprocess
    import sys
    model, x, _ = mobilenet
    model.export(str(tmp_path / "saved"))
    out = tmp_path / "saved.onnx"
    subprocess.run([sys.executable, "-m", "tf2onnx.convert", "--saved-model",
                    str(tmp_path / "saved"), "--opset", "13", "--output", str(out)],
                   check=True, capture_output=True)
    proto = onnx.load(str(out))
    assert proto.graph.node[1].name.startswith("StatefulPartitionedCall/") or any(
        n.name.startswith("StatefulPartitionedCall/") for n in proto.graph.node)
    r = onnxdbg.tf.compare(model, x, onnx_model=str(out))
    assert r.agree, str(r)
    assert covered(r) >= 0.9 * len(r.layers)

    # The SavedModel folder itself: one row per layer scope of its frozen serving graph.
    by_folder = onnxdbg.tf.compare(str(tmp_path / "saved"), x, onnx_model=proto)
    assert by_folder.agree and by_folder.model_class == "SavedModel", str(by_folder)
    assert len(by_folder.layers) >= 100 and all(row.mapped for row in by_folder.layers)
    proto, _ = with_scaled_weights(proto, "block_3_depthwise_1/depthwise", 1.2)
    changed = onnxdbg.tf.compare(str(tmp_path / "saved"), x, onnx_model=proto)
    assert changed.first_divergent_layer == "block_3_depthwise_1", str(changed)
    with pytest.raises(onnxdbg.UsageError, match="takes 1 inputs"):
        onnxdbg.tf.compare(str(tmp_path / "saved"), [x, x], onnx_model=proto)


def test_a_conversion_that_leaves_tensorflow_ops_is_one_error_naming_them():
    x_in = keras.Input(shape=(8,), name="x")
    h = keras.layers.Dense(8, name="dense")(x_in)
    y = keras.layers.Lambda(lambda t: tf.math.cumsum(t, axis=1), name="running_sum")(h)
    model = keras.Model(x_in, y, name="cumsum_net")
    x = np.ones((1, 8), np.float32)
    with pytest.raises(onnxdbg.Error, match="left Cumsum unconverted at opset 9.*"
                                            "diagnose_conversion"):
        onnxdbg.tf.compare(model, x, opset=9)
    assert onnxdbg.tf.compare(model, x, opset=11).agree


def test_a_conversion_the_backend_cannot_run_is_the_error_verdict():
    """tf2onnx 1.17 at opset 5 writes a Pow without broadcast for |rfft(x)|: the reference says
    which node and why, and the result's verdict is that error."""
    x_in = keras.Input(shape=(8,), name="x")
    y = keras.layers.Lambda(lambda t: tf.signal.rfft(t), name="fft")(x_in)
    model = keras.Model(x_in, keras.layers.Lambda(lambda t: tf.math.abs(t), name="mag")(y))
    r = onnxdbg.tf.compare(model, np.ones((1, 8), np.float32), opset=5)
    assert r.verdict == "error" and not r.agree
    assert r.verdict_line().startswith("verdict: error: reference could not run the ONNX model")
    assert "broadcast" in r.error and r.to_json()["error"] == r.error


def tensorflow_dump(model, x):
    """Every float tensor of the model's frozen graph, as a TensorFlow user dumps them: keyed by
    TensorFlow's tensor names ("<scope>/<Op>:0"), in TensorFlow's NHWC layout."""
    from tensorflow.python.framework.convert_to_constants import (
        convert_variables_to_constants_v2)
    fn = tf.function(lambda t: model(t, training=False))
    frozen = convert_variables_to_constants_v2(
        fn.get_concrete_function(tf.TensorSpec(x.shape, tf.float32)))
    graph_def = frozen.graph.as_graph_def()
    with tf.Graph().as_default() as g:
        tf.graph_util.import_graph_def(graph_def, name="")
        placeholder = next(op for op in g.get_operations() if op.type == "Placeholder")
        fetch = [t for op in g.get_operations() if op.type not in ("Const", "Placeholder")
                 for t in op.outputs if t.dtype == tf.float32]
        with tf.compat.v1.Session(graph=g) as sess:
            values = sess.run(fetch, feed_dict={placeholder.outputs[0]: x})
    return {t.name: v for t, v in zip(fetch, values)}


def test_the_cli_localizes_the_layer_from_a_tensorflow_dump(mobilenet, cli, tmp_path):
    """The CLI golden path (no Python bridge, no hand mapping): every tensor TensorFlow computed,
    keyed by its TensorFlow name, NHWC, against the conversion with a changed depthwise conv;
    --golden-names suffix renames what the converter kept and drops what it fused away,
    --golden-layout auto transposes by tf2onnx's input Transpose."""
    import subprocess
    model, x, proto = mobilenet
    changed, node = with_scaled_weights(proto, "block_3_depthwise_1/depthwise", 1.2)
    onnx.save(changed, str(tmp_path / "changed.onnx"))
    dump = tensorflow_dump(model, x)
    assert len(dump) > 150 and any(k.endswith("block_3_depthwise_1/depthwise:0") or
                                   k.endswith("block_3_depthwise/depthwise:0") for k in dump)
    dump["predictions"] = model(x, training=False).numpy()  # the output, by its ONNX name
    np.savez(tmp_path / "golden.npz", **dump)
    np.savez(tmp_path / "in.npz", input=x)
    cmd = [cli, "run", str(tmp_path / "changed.onnx"), "--backends", "reference",
           "--load-inputs", str(tmp_path / "in.npz"), "--load-outputs",
           str(tmp_path / "golden.npz"), "--layerwise", "--isolate", "--golden-names", "suffix",
           "--golden-layout", "auto", "--json"]
    p = subprocess.run(cmd, capture_output=True, text=True)
    assert p.returncode == 1, p.stderr
    report = json.loads(p.stdout)
    first = report["first_divergent_node"]
    assert first["node"] == node.name, (first, p.stderr[-3000:])
    # Tensors the dump lacks are computed from its values upstream: every node after the conv
    # inherits its error, none takes it for its own.
    own = [r["node"] for r in report["layerwise"] if r.get("error_source") == "own"]
    assert own == [node.name], own
    mapping = report["golden_mapping"]
    assert mapping["dropped"] and mapping["transposed"][0]["perm"] == [0, 3, 1, 2]
    notes = " ".join(mapping["notes"])
    assert "dropped" in notes and "transposed" in notes and "reshaped" in notes, notes
    # The unchanged conversion agrees with the same dump.
    onnx.save(proto, str(tmp_path / "same.onnx"))
    cmd[2] = str(tmp_path / "same.onnx")
    p = subprocess.run(cmd, capture_output=True, text=True)
    assert p.returncode == 0, (p.stderr[-3000:], json.loads(p.stdout)["verdict_line"])


def test_a_sequential_model_from_a_keras_file(tmp_path):
    keras.utils.set_random_seed(6)
    model = keras.Sequential([keras.Input(shape=(12, 12, 2)),
                              keras.layers.Conv2D(4, 3, activation="relu", name="conv"),
                              keras.layers.MaxPooling2D(name="pool"),
                              keras.layers.Flatten(name="flat"),
                              keras.layers.Dropout(0.5, name="drop"),
                              keras.layers.Dense(3, name="head")], name="seq")
    path = tmp_path / "seq.keras"
    model.save(str(path))
    x = np.random.default_rng(6).standard_normal((1, 12, 12, 2)).astype(np.float32)
    r = onnxdbg.tf.compare(str(path), x)
    assert r.agree, str(r)
    rows = {row.path: row for row in r.layers}
    assert rows["conv"].mapped and rows["pool"].mapped and rows["head"].mapped, str(r)
    assert "identity at inference" in rows["drop"].reason, str(r)
    assert r.model_class == "Sequential"
