"""Tests of onnxdbg.torch: module-by-module comparison of a torch.nn.Module with its export.

Real models (torchvision's resnet18 and mobilenet_v3_small, nn.TransformerEncoder) with seeded
random weights and small inputs; two modules whose export really computes something else (a
Python `if` baked in by tracing, and nn.Softplus whose threshold the exporter drops).
"""

import gc
import glob
import io
import json
import os
import tempfile

import numpy as np
import pytest

torch = pytest.importorskip("torch")
onnx = pytest.importorskip("onnx")

import onnxdbg  # noqa: E402
import onnxdbg.torch as odt  # noqa: E402

# Tracing warns about Python control flow on tensor values; the Gate below relies on it.
pytestmark = pytest.mark.filterwarnings("ignore::torch.jit.TracerWarning")


@pytest.fixture(autouse=True)
def one_thread():
    """Single-threaded torch: the tests share the machine with builds."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def randomize_norms(model):
    """BatchNorm statistics away from 0/1, so that folding them into Conv changes values."""
    g = torch.Generator().manual_seed(1)
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            n = m.num_features
            m.running_mean.copy_(torch.randn(n, generator=g) * 0.1)
            m.running_var.copy_(torch.rand(n, generator=g) + 0.5)
            m.weight.data.copy_(torch.rand(n, generator=g) + 0.5)
            m.bias.data.copy_(torch.randn(n, generator=g) * 0.1)
    return model


def resnet18():
    tv = pytest.importorskip("torchvision")
    torch.manual_seed(0)
    return randomize_norms(tv.models.resnet18(num_classes=10)).eval(), (torch.randn(1, 3, 64, 64),)


def mobilenet():
    tv = pytest.importorskip("torchvision")
    torch.manual_seed(0)
    m = randomize_norms(tv.models.mobilenet_v3_small(num_classes=10)).eval()
    return m, (torch.randn(1, 3, 64, 64),)


def transformer():
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(d_model=16, nhead=2, dim_feedforward=32,
                                             batch_first=True)
    return torch.nn.TransformerEncoder(layer, num_layers=2).eval(), (torch.randn(1, 5, 16),)


MODELS = {"resnet18": resnet18, "mobilenet_v3_small": mobilenet, "transformer": transformer}


def rows_by_label(rows):
    return {r.label: r for r in rows}


def onnx_types(model_bytes):
    m = onnx.shape_inference.infer_shapes(onnx.load_from_string(model_bytes))
    out = {}
    for vi in list(m.graph.value_info) + list(m.graph.output):
        out[vi.name] = tuple(d.dim_value for d in vi.type.tensor_type.shape.dim)
    return out


# --- mapping (torch side only) -------------------------------------------------------------------


def check_mapped_shapes(cap):
    types = onnx_types(cap.model)
    mapped = [r for r in cap.rows if r.mapped]
    assert mapped
    for r in mapped:
        assert types[r.onnx_tensor] == r.shape, r.label
        assert r.onnx_tensor in cap.golden
        assert r.onnx_nodes
    return mapped


def test_resnet18_mapping_follows_scopes_and_conv_batchnorm_fusion():
    model, args = resnet18()
    cap = odt.capture(model, args, opset=13)
    rows = rows_by_label(cap.rows)
    check_mapped_shapes(cap)
    # The exporter folds each BatchNorm into the Conv before it: the Conv node's output is the
    # BatchNorm's output, and the Conv module's own output is nowhere in the graph.
    assert rows["bn1"].onnx_tensor == "/conv1/Conv_output_0"
    assert rows["bn1"].onnx_nodes == ["/conv1/Conv"]
    assert not rows["conv1"].mapped and "fused" in rows["conv1"].reason
    # A module called twice: two rows, the second call is the exporter's "relu_1" scope.
    assert rows["layer1.0.relu#1"].onnx_tensor == "/layer1/layer1.0/relu/Relu_output_0"
    assert rows["layer1.0.relu#2"].onnx_tensor == "/layer1/layer1.0/relu_1/Relu_output_0"
    assert rows["layer2.0.downsample.1"].onnx_nodes == [
        "/layer2/layer2.0/downsample/downsample.0/Conv"]
    # Containers: the tensor leaving their scope.
    assert rows["layer1.0"].onnx_tensor == "/layer1/layer1.0/relu_1/Relu_output_0"
    assert rows["layer4"].onnx_tensor == "/layer4/layer4.1/relu_1/Relu_output_0"
    graph_output = onnx.load_from_string(cap.model).graph.output[0].name
    assert rows["fc"].onnx_tensor == graph_output
    assert rows["<root>"].onnx_tensor == graph_output
    # Execution order: children return before their parents.
    labels = [r.label for r in cap.rows]
    assert labels.index("layer1.0.conv1") < labels.index("layer1.0") < labels.index("layer1")
    assert labels[-1] == "<root>"
    unmapped = [r.label for r in cap.rows if not r.mapped]
    assert all(lbl.endswith(("conv1", "conv2", "downsample.0")) for lbl in unmapped), unmapped
    np.testing.assert_array_equal(cap.golden[graph_output], model(*args).detach().numpy())


def test_transformer_mapping_takes_the_exported_path_and_skips_dropout():
    model, args = transformer()
    cap = odt.capture(model, args, opset=14)
    rows = rows_by_label(cap.rows)
    check_mapped_shapes(cap)
    # The exporter traced the composite path; under no_grad the module would take its fused fast
    # path and call none of these submodules.
    assert rows["layers.0.self_attn[0]"].onnx_tensor == "/layers.0/self_attn/Transpose_5_output_0"
    assert rows["layers.1.linear1"].onnx_tensor == "/layers.1/linear1/Add_output_0"
    assert rows["layers.0.norm2"].onnx_tensor == rows["layers.0"].onnx_tensor
    for d in ("dropout", "dropout1", "dropout2"):
        assert not rows[f"layers.0.{d}"].mapped
        assert "identity" in rows[f"layers.0.{d}"].reason
    assert "layers.0.self_attn[1]" not in rows  # need_weights=False returns None: skipped


def test_mobilenet_mapping_covers_every_block():
    model, args = mobilenet()
    cap = odt.capture(model, args, opset=13)
    rows = rows_by_label(cap.rows)
    mapped = check_mapped_shapes(cap)
    assert len(mapped) > 100
    for i in range(13):
        assert rows[f"features.{i}"].mapped, i
    assert rows["features.3"].onnx_tensor == "/features/features.3/Add_output_0"  # residual
    se = rows["features.1.block.1"]
    assert se.class_name == "SqueezeExcitation"
    assert se.onnx_tensor == "/features/features.1/block/block.1/Mul_output_0"
    assert "identity" in rows["classifier.2"].reason  # Dropout


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.relu = torch.nn.ReLU()
        self.lin = torch.nn.Linear(4, 4)

    def forward(self, x):
        return self.relu(self.lin(self.relu(x)))


class Twice(torch.nn.Module):
    """A block called twice, and a ReLU called twice on values the exporter computes once."""

    def __init__(self):
        super().__init__()
        self.b = Block()
        self.relu = torch.nn.ReLU()

    def forward(self, x):
        return self.relu(self.b(self.b(x))) + self.relu(x)


def test_modules_called_twice():
    torch.manual_seed(0)
    cap = odt.capture(Twice(), (torch.randn(2, 4),), opset=13)
    rows = rows_by_label(cap.rows)
    assert [r.label for r in cap.rows] == [
        "b.relu#1", "b.lin#1", "b.relu#2", "b#1", "b.relu#3", "b.lin#2", "b.relu#4", "b#2",
        "relu#1", "relu#2", "<root>"]
    assert rows["b.relu#3"].onnx_tensor == "/b/relu_2/Relu_output_0"
    assert rows["b.lin#2"].onnx_tensor == "/b/lin_1/Gemm_output_0"
    # One "/b" scope for both calls: each call takes its last submodule's tensor.
    assert rows["b#1"].onnx_tensor == "/b/relu_1/Relu_output_0"
    assert rows["b#2"].onnx_tensor == "/b/relu_3/Relu_output_0"
    # relu(x) equals b's first relu(x): the exporter kept one of them.
    for lbl in ("relu#1", "relu#2"):
        assert not rows[lbl].mapped
        assert "called 2 times but exported in 1 scope" in rows[lbl].reason


def test_scope_chain_reads_dynamo_metadata():
    modules = {"layer1", "layer1.0", "layer1.0.conv1"}

    def resolve(parent, comp):  # the TorchScript names shorten "layer1.0.conv1" to "conv1"
        comp = comp[:-2] if comp.endswith("_1") else comp
        for path in (comp, f"{parent}.{comp}"):
            if path in modules:
                return path
        return None

    meta = {"pkg.torch.onnx.name_scopes": "['', 'layer1', 'layer1.0', 'layer1.0.conv1', "
                                          "'conv2d']"}
    assert odt.scope_chain("node_conv2d", meta, resolve) == [
        ("layer1", "layer1"), ("layer1.0", "layer1.0"), ("layer1.0.conv1", "layer1.0.conv1")]
    meta = {"pkg.torch.onnx.name_scopes": "['', 'relu@1', 'relu_1']"}
    assert odt.scope_chain("n", meta, resolve) == [("relu", "relu@1")]
    meta = {"pkg.torch.onnx.name_scopes": "['', 'layer1', 'layer1.0', 'layer1.0.conv1_1', 'c']"}
    assert odt.scope_chain("n", meta, resolve)[-1] == ("layer1.0.conv1", "layer1.0.conv1_1")
    meta = {"namespace": ": __main__.M/net: torch.nn.modules.container.Sequential/net.0: "
                         "torch.nn.modules.linear.Linear/linear: aten.linear.default"}
    assert odt.scope_chain("n", meta, resolve) == [("net", "net"), ("net.0", "net.0")]
    # Without metadata, the TorchScript exporter's name; outside every scope, nothing.
    assert odt.scope_chain("/layer1/layer1.0/conv1/Conv", {}, resolve) == [
        ("layer1", "/layer1"), ("layer1.0", "/layer1/layer1.0"),
        ("layer1.0.conv1", "/layer1/layer1.0/conv1")]
    assert odt.scope_chain("Identity_3", {}, resolve) == []
    assert odt.scope_chain("/Flatten", {}, resolve) == []


def test_capture_of_a_given_export_matches_a_fresh_one(tmp_path):
    model, args = transformer()
    path = tmp_path / "encoder.onnx"
    torch.onnx.export(model, args, str(path), opset_version=14)
    given = odt.capture(model, args, onnx_model=path)
    fresh = odt.capture(model, args, opset=14)
    assert [(r.label, r.onnx_tensor) for r in given.rows] == [
        (r.label, r.onnx_tensor) for r in fresh.rows]
    assert given.opset == 14


def test_misuse_raises_usage_error(tmp_path):
    model, args = transformer()
    with pytest.raises(onnxdbg.UsageError, match="torch.nn.Module"):
        odt.capture(lambda x: x, args)
    with pytest.raises(onnxdbg.UsageError, match="not a file"):
        odt.capture(model, args, onnx_model=tmp_path / "missing.onnx")
    buf = io.BytesIO()
    torch.onnx.export(model, args, buf, opset_version=14)
    with pytest.raises(onnxdbg.UsageError, match="1 inputs"):
        odt.capture(model, (args[0], args[0]), onnx_model=buf.getvalue())
    with pytest.raises(onnxdbg.UsageError, match="opset"):
        odt.capture(model, args, onnx_model=buf.getvalue(), opset=14)
    with pytest.raises(onnxdbg.UsageError, match="shape"):
        odt.capture(model, (torch.randn(1, 7, 16),), onnx_model=buf.getvalue())
    with pytest.raises(onnxdbg.UsageError, match="backend"):
        odt.compare(model, args, backend=("reference",))
    with pytest.raises(onnxdbg.UsageError, match="atol"):
        odt.compare(model, args, atol=-1.0)


def test_capture_restores_training_mode():
    model, args = transformer()
    model.train()
    odt.capture(model, args, opset=14)
    assert all(m.training for m in model.modules())


# --- comparing (needs the onnxdbg core) ----------------------------------------------------------


@pytest.mark.parametrize("backend", ["reference", "onnxruntime"])
@pytest.mark.parametrize("name", sorted(MODELS))
def test_real_models_agree_module_by_module(name, backend):
    model, args = MODELS[name]()
    result = odt.compare(model, args, opset=14, backend=backend)
    text = str(result)
    assert result.agree, text
    assert result.verdict == "agree"
    assert result.first_divergent_module is None and result.first_divergent_nodes == []
    compared = [r for r in result.modules if r.passed is not None]
    assert len(compared) == sum(r.mapped for r in result.modules) > 10, text
    assert all(r.passed and r.max_abs_error is not None for r in compared), text
    assert result.outputs and all(o.passed for o in result.outputs)
    assert text.splitlines()[-1].startswith("verdict: agree")
    json.dumps(result.to_json())


class Gate(torch.nn.Module):
    """Data-dependent control flow: tracing keeps the branch the example input took."""

    def forward(self, x):
        if x.sum() > 0:
            return x * 2
        return x - 1


class Gated(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.pre = torch.nn.Linear(8, 8, bias=False)
        self.gate = Gate()
        self.post = torch.nn.Linear(8, 4)

    def forward(self, x):
        return self.post(self.gate(self.pre(x)))


def onnxdbg_temp_dirs():
    gc.collect()
    return set(glob.glob(os.path.join(tempfile.gettempdir(), "onnxdbg-py-*")))


@pytest.mark.parametrize("backend", ["reference", "onnxruntime"])
def test_traced_branch_diverges_first_at_the_gate(tmp_path, backend):
    torch.manual_seed(0)
    model = Gated().eval()
    x = torch.randn(2, 8)
    if model.pre(x).sum() < 0:
        x = -x  # pre has no bias: -x takes the other branch
    path = tmp_path / "gated.onnx"
    torch.onnx.export(model, (x,), str(path), opset_version=14)  # traced with x * 2
    before = onnxdbg_temp_dirs()

    result = odt.compare(model, (-x,), onnx_model=path, backend=backend)  # runs x - 1
    rows = rows_by_label(result.modules)
    assert not result.agree
    assert rows["pre"].passed is True  # not before
    assert rows["gate"].passed is False and rows["gate"].source == "own"
    assert rows["gate"].onnx_nodes == ["/gate/Mul"]
    assert rows["gate"].own_error > 0.5
    assert rows["post"].passed is False and rows["post"].source == "inherited"  # not after
    assert result.first_divergent_module == "gate"
    assert result.first_divergent_nodes == ["/gate/Mul"]
    assert result.outputs[0].passed is False
    last = str(result).splitlines()[-1]
    assert "first divergent module: gate (Gate)" in last and "/gate/Mul" in last
    assert onnxdbg_temp_dirs() <= before  # isolation leaves no temporary files

    data = result.to_json()
    assert data["first_divergent_module"] == "gate"
    assert json.loads(json.dumps(data))["verdict"] == "disagree"
    page = tmp_path / "gated.html"
    result.to_html(page)
    assert page.stat().st_size > 1000
    assert "module gate (Gate)" in page.read_text()  # the module path shown on its nodes
    overlay = result.overlay()
    assert overlay["first_divergent_node"]["node"] == "/gate/Mul"
    painted = {e["node"]: e for e in overlay["layerwise"]}
    assert painted["/gate/Mul"]["pass"] is False and "module gate" in painted["/gate/Mul"]["note"]
    assert painted["/pre/MatMul"]["pass"] is True


class SoftplusNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = torch.nn.Linear(4, 8)
        self.act = torch.nn.Softplus(beta=1.0, threshold=1.0)
        self.head = torch.nn.Linear(8, 2)

    def forward(self, x):
        return self.head(self.act(self.stem(x)))


def test_exporter_dropping_softplus_threshold_is_found_at_the_module():
    # torch.nn.Softplus is linear above `threshold`; the exporter writes ONNX Softplus, which
    # has no threshold: log(1 + e^2) = 2.127 where torch returns 2.
    torch.manual_seed(0)
    model = SoftplusNet().eval()
    x = torch.randn(3, 4) * 3
    assert (model.stem(x) > 1.5).any()
    result = odt.compare(model, (x,), opset=14)
    rows = rows_by_label(result.modules)
    assert rows["stem"].passed is True
    assert rows["act"].passed is False and rows["act"].source == "own"
    assert rows["act"].onnx_nodes == ["/act/Softplus"]
    assert rows["head"].source == "inherited"
    assert result.first_divergent_module == "act"
    assert "first divergent module: act (Softplus)" in str(result).splitlines()[-1]


class TwoInputGate(torch.nn.Module):
    def forward(self, h, x):
        if h.sum() > 0:
            return h * 2 + x
        return h - 1 + x


class Shifted(torch.nn.Module):
    """The gate reads `pre(x) + 1`, computed in the parent's forward: no module returns it."""

    def __init__(self):
        super().__init__()
        self.pre = torch.nn.Linear(8, 8, bias=False)
        self.gate = TwoInputGate()

    def forward(self, x):
        return self.gate(self.pre(x) * 3, x)


def test_isolation_uses_the_reference_where_the_framework_has_no_value():
    torch.manual_seed(0)
    model = Shifted().eval()
    x = torch.randn(2, 8)
    if model.pre(x).sum() < 0:
        x = -x
    exported = io.BytesIO()
    torch.onnx.export(model, (x,), exported, opset_version=14)
    result = odt.compare(model, (-x,), onnx_model=exported.getvalue())
    rows = rows_by_label(result.modules)
    assert result.first_divergent_module == "gate"
    assert rows["gate"].source == "own"
    # Its inputs: x (a graph input) and the parent's Mul, which no module returned and which
    # has the shape of both of gate's arguments: the reference's value, said in the note.
    assert "reference's values of /Mul_output_0" in rows["gate"].note
    assert f"note: gate: {rows['gate'].note}" in str(result)


class Keywords(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)

    def forward(self, x, bias=None, scale=None):
        y = self.lin(x)
        return {"y": y * scale, "z": (y + bias, y.sum())}


def test_keyword_arguments_and_nested_outputs():
    torch.manual_seed(0)
    result = odt.compare(Keywords().eval(), (torch.randn(2, 4),),
                         {"scale": torch.full((1,), 2.0), "bias": torch.ones(4)}, opset=14)
    assert result.agree, str(result)
    assert [o.key for o in result.outputs] == ["['y']", "['z'][0]", "['z'][1]"]
    rows = rows_by_label(result.modules)
    assert rows["<root>['z'][1]"].shape == () and rows["<root>['z'][1]"].onnx_node == "/ReduceSum"
