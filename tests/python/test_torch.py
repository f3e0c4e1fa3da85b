"""Tests of onnxdbg.torch: module-by-module comparison of a torch.nn.Module with its export.

Real models (torchvision's resnet18 and mobilenet_v3_small, nn.TransformerEncoder) with seeded
random weights and small inputs; two modules whose export really computes something else (a
Python `if` baked in by tracing, and nn.Softplus whose threshold the TorchScript exporter drops).

They run against the exporter torch.onnx.export uses by default: the TorchScript exporter (torch
1.13 to 2.8: node names "/layer1/layer1.0/conv1/Conv") or the dynamo exporter (torch 2.9 on:
node metadata, names after the exported program's fx nodes); the TorchScript-only tests pass
dynamo=False where torch has the dynamo exporter.
"""

import gc
import glob
import inspect
import json
import os
import tempfile

import numpy as np
import pytest

torch = pytest.importorskip("torch")
onnx = pytest.importorskip("onnx")

import onnxdbg  # noqa: E402
import onnxdbg.torch as odt  # noqa: E402

# Tracing warns about Python control flow on tensor values; the Gate below relies on it. torch 2.x
# warns that the TorchScript exporter is deprecated.
pytestmark = [pytest.mark.filterwarnings("ignore::torch.jit.TracerWarning"),
              pytest.mark.filterwarnings("ignore::DeprecationWarning")]

# The exporter torch.onnx.export uses by default, and the keyword arguments that select the
# TorchScript exporter (dynamo=False where torch has both).
DYNAMO = odt.default_exporter() == "dynamo"
HAS_DYNAMO = "dynamo" in inspect.signature(torch.onnx.export).parameters
TORCHSCRIPT = {"dynamo": False} if HAS_DYNAMO else {}


def opset(v):
    """``v`` for the TorchScript exporter; None (the exporter's default, >= 18) for the dynamo
    exporter, whose conversion to older opsets fails on LayerNormalization and Reduce*."""
    return None if DYNAMO else v


def export_bytes(model, args, **kw):
    """The model exported the default way (kw: torch.onnx.export's options), as bytes."""
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "model.onnx")
        if DYNAMO and kw.get("dynamo", True):
            kw = dict(kw, external_data=False)
        torch.onnx.export(model, args, path, **kw)
        with open(path, "rb") as f:
            return f.read()


def producer(model_bytes, tensor):
    """The node producing ``tensor``."""
    for n in onnx.load_from_string(model_bytes).graph.node:
        if tensor in n.output:
            return n
    raise KeyError(tensor)


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
    cap = odt.capture(model, args, opset=opset(13))
    rows = rows_by_label(cap.rows)
    check_mapped_shapes(cap)
    assert cap.exporter == ("dynamo" if DYNAMO else "torchscript") and cap.exported
    if DYNAMO:
        # The exporter's optimizer fuses each BatchNorm into the Conv before it; the fused Conv
        # node carries the BatchNorm's scope and fx node, and the Conv module has no nodes.
        bn1 = producer(cap.model, rows["bn1"].onnx_tensor)
        assert bn1.op_type == "Conv" and rows["bn1"].onnx_nodes == [bn1.name]
        assert not rows["conv1"].mapped and "fused" in rows["conv1"].reason
        assert "FuseBatchNormIntoConv" in rows["conv1"].reason
        # A module called twice: the metadata names one scope "layer1.0.relu" for both calls,
        # the exported program tells them apart (the second call reads the residual Add).
        first = producer(cap.model, rows["layer1.0.relu#1"].onnx_tensor)
        second = producer(cap.model, rows["layer1.0.relu#2"].onnx_tensor)
        assert first.op_type == second.op_type == "Relu" and first.name != second.name
        assert producer(cap.model, second.input[0]).op_type == "Add"
        assert producer(cap.model, first.input[0]).name == rows["layer1.0.bn1"].onnx_node
        down = producer(cap.model, rows["layer2.0.downsample.1"].onnx_tensor)
        assert down.op_type == "Conv" and rows["layer2.0.downsample.1"].onnx_nodes == [down.name]
        assert rows["layer4"].onnx_tensor == rows["layer4.1.relu#2"].onnx_tensor
    else:
        # The exporter folds each BatchNorm into the Conv before it: the Conv node's output is
        # the BatchNorm's output, and the Conv module's own output is nowhere in the graph.
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
    assert rows["layer1.0"].onnx_tensor == rows["layer1.0.relu#2"].onnx_tensor
    assert rows["layer1.0.relu#1"].onnx_tensor != rows["layer1.0.relu#2"].onnx_tensor
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
    cap = odt.capture(model, args, opset=opset(14))
    rows = rows_by_label(cap.rows)
    check_mapped_shapes(cap)
    # The exporter traced the composite path; under no_grad the module would take its fused fast
    # path and call none of these submodules.
    if DYNAMO:
        attn = rows["layers.0.self_attn[0]"]
        assert producer(cap.model, attn.onnx_tensor).op_type == "Transpose"
        assert attn.onnx_node in attn.onnx_nodes and len(attn.onnx_nodes) > 10
        lin = rows["layers.1.linear1"]
        assert producer(cap.model, lin.onnx_tensor).op_type == "Add"
        assert len(lin.onnx_nodes) == 2  # MatMul + Add
        norm = producer(cap.model, rows["layers.0.norm1"].onnx_tensor)
        assert norm.op_type == "LayerNormalization"
    else:
        assert rows["layers.0.self_attn[0]"].onnx_tensor == (
            "/layers.0/self_attn/Transpose_5_output_0")
        assert rows["layers.1.linear1"].onnx_tensor == "/layers.1/linear1/Add_output_0"
    assert rows["layers.0.norm2"].onnx_tensor == rows["layers.0"].onnx_tensor
    assert all(r.mapped for r in cap.rows if r.class_name != "Dropout")
    for d in ("dropout", "dropout1", "dropout2"):
        assert not rows[f"layers.0.{d}"].mapped
        assert "identity" in rows[f"layers.0.{d}"].reason
    assert "layers.0.self_attn[1]" not in rows  # need_weights=False returns None: skipped


def test_mobilenet_mapping_covers_every_block():
    model, args = mobilenet()
    cap = odt.capture(model, args, opset=opset(13))
    rows = rows_by_label(cap.rows)
    mapped = check_mapped_shapes(cap)
    assert len(mapped) > 100
    for i in range(13):
        assert rows[f"features.{i}"].mapped, i
    se = rows["features.1.block.1"]
    assert se.class_name == "SqueezeExcitation"
    if DYNAMO:
        assert producer(cap.model, rows["features.3"].onnx_tensor).op_type == "Add"  # residual
        assert producer(cap.model, se.onnx_tensor).op_type == "Mul"
    else:
        assert rows["features.3"].onnx_tensor == "/features/features.3/Add_output_0"  # residual
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
    model, args = Twice(), (torch.randn(2, 4),)
    cap = odt.capture(model, args, opset=opset(13))
    rows = rows_by_label(cap.rows)
    assert [r.label for r in cap.rows] == [
        "b.relu#1", "b.lin#1", "b.relu#2", "b#1", "b.relu#3", "b.lin#2", "b.relu#4", "b#2",
        "relu#1", "relu#2", "<root>"]
    if DYNAMO:
        check_twice_dynamo(model, args, cap)
        return
    assert rows["b.relu#3"].onnx_tensor == "/b/relu_2/Relu_output_0"
    assert rows["b.lin#2"].onnx_tensor == "/b/lin_1/Gemm_output_0"
    # One "/b" scope for both calls: each call takes its last submodule's tensor.
    assert rows["b#1"].onnx_tensor == "/b/relu_1/Relu_output_0"
    assert rows["b#2"].onnx_tensor == "/b/relu_3/Relu_output_0"
    # relu(x) equals b's first relu(x): the exporter kept one of them.
    for lbl in ("relu#1", "relu#2"):
        assert not rows[lbl].mapped
        assert "called 2 times but exported in 1 scope" in rows[lbl].reason


def check_twice_dynamo(model, args, cap):
    """The dynamo export of Twice: one metadata scope per module for all its calls; the exported
    program's module stack tells the calls apart. Its optimizer merged relu(relu(v)) into one
    Relu (FuseSuccessiveRelu) and the root's relu(x) with b's first (common subexpressions)."""
    rows = rows_by_label(cap.rows)
    mapped = {r.label for r in cap.rows if r.mapped}
    assert mapped == {"b.relu#1", "b.lin#1", "b.relu#3", "b.lin#2", "relu#1", "<root>"}
    ops = {lbl: producer(cap.model, rows[lbl].onnx_tensor).op_type for lbl in mapped}
    assert ops == {"b.relu#1": "Relu", "b.lin#1": "Gemm", "b.relu#3": "Relu", "b.lin#2": "Gemm",
                   "relu#1": "Relu", "<root>": "Add"}
    assert rows["b.lin#1"].onnx_tensor != rows["b.lin#2"].onnx_tensor
    for lbl in ("b.relu#2", "b.relu#4", "relu#2"):
        assert "no ONNX nodes in its scope" in rows[lbl].reason, lbl
        assert "merged" in rows[lbl].reason
    for lbl in ("b#1", "b#2"):  # their last Relu was merged into the next call's
        assert "is not in the ONNX graph" in rows[lbl].reason, lbl
    # A given export has only the metadata: calls told apart by graph position where a
    # module's nodes form one run per call (b.lin), not mapped where they do not.
    given = rows_by_label(odt.capture(model, args, onnx_model=cap.model).rows)
    assert given["b.lin#1"].onnx_tensor == rows["b.lin#1"].onnx_tensor
    assert given["b.lin#2"].onnx_tensor == rows["b.lin#2"].onnx_tensor
    assert "graph position" in given["b.lin#2"].reason
    assert not given["b.relu#1"].mapped and "runs" in given["b.relu#1"].reason
    assert not given["b#1"].mapped


def test_scope_chain_reads_dynamo_metadata():
    modules = {"layer1", "layer1.0", "layer1.0.conv1"}

    def resolve(parent, comp):  # the TorchScript names shorten "layer1.0.conv1" to "conv1"
        comp = comp[:-2] if comp.endswith("_1") else comp
        for path in (comp, f"{parent}.{comp}"):
            if path in modules:
                return path
        return None

    # What torch 2.15's dynamo exporter writes: module paths, root "" first, the fx node last.
    meta = {"pkg.torch.onnx.name_scopes": "['', 'layer1', 'layer1.0', 'layer1.0.conv1', "
                                          "'convolution']"}
    assert odt.scope_chain("node_convolution", meta, resolve) == [
        ("layer1", "layer1"), ("layer1.0", "layer1.0"), ("layer1.0.conv1", "layer1.0.conv1")]
    meta = {"pkg.torch.onnx.name_scopes": "['', 'view']"}  # the root's own node
    assert odt.scope_chain("node_view", meta, resolve) == []
    meta = {"pkg.torch.onnx.name_scopes": "['', 'relu@1', 'relu_1']"}  # a call mark, if any
    assert odt.scope_chain("n", meta, resolve) == [("relu", "relu@1")]
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
    path.write_bytes(export_bytes(model, args, opset_version=opset(14)))
    given = odt.capture(model, args, onnx_model=path)
    fresh = odt.capture(model, args, opset=opset(14))
    assert [(r.label, r.onnx_tensor) for r in given.rows] == [
        (r.label, r.onnx_tensor) for r in fresh.rows]
    assert sum(r.mapped for r in given.rows) > 10
    assert given.opset == fresh.opset == (14 if not DYNAMO else given.opset)
    assert given.exporter == fresh.exporter and not given.exported and fresh.exported


def test_misuse_raises_usage_error(tmp_path):
    model, args = transformer()
    with pytest.raises(onnxdbg.UsageError, match="torch.nn.Module"):
        odt.capture(lambda x: x, args)
    with pytest.raises(onnxdbg.UsageError, match="not a file"):
        odt.capture(model, args, onnx_model=tmp_path / "missing.onnx")
    exported = export_bytes(model, args, opset_version=opset(14))
    with pytest.raises(onnxdbg.UsageError, match="1 inputs"):
        odt.capture(model, (args[0], args[0]), onnx_model=exported)
    with pytest.raises(onnxdbg.UsageError, match="opset"):
        odt.capture(model, args, onnx_model=exported, opset=14)
    with pytest.raises(onnxdbg.UsageError, match="shape"):
        odt.capture(model, (torch.randn(1, 7, 16),), onnx_model=exported)
    with pytest.raises(onnxdbg.UsageError, match="contradicts"):
        odt.capture(model, args, opset=18, export_kwargs={"opset_version": 17})
    with pytest.raises(onnxdbg.UsageError, match="backend"):
        odt.compare(model, args, backend=("reference",))
    with pytest.raises(onnxdbg.UsageError, match="atol"):
        odt.compare(model, args, atol=-1.0)


def test_capture_restores_training_mode():
    model, args = transformer()
    model.train()
    odt.capture(model, args, opset=opset(14))
    assert all(m.training for m in model.modules())


# --- comparing (needs the onnxdbg core) ----------------------------------------------------------


@pytest.mark.parametrize("backend", ["reference", "onnxruntime"])
@pytest.mark.parametrize("name", sorted(MODELS))
def test_real_models_agree_module_by_module(name, backend):
    model, args = MODELS[name]()
    result = odt.compare(model, args, opset=opset(14), backend=backend)
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
    # Traced with x * 2 (torch.export refuses the data-dependent `if`: the TorchScript exporter)
    torch.onnx.export(model, (x,), str(path), opset_version=14, **TORCHSCRIPT)
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


def softplus_case():
    torch.manual_seed(0)
    model = SoftplusNet().eval()
    x = torch.randn(3, 4) * 3
    assert (model.stem(x) > 1.5).any()
    return model, x


def test_exporter_dropping_softplus_threshold_is_found_at_the_module():
    # torch.nn.Softplus is linear above `threshold`; the TorchScript exporter writes ONNX
    # Softplus, which has no threshold: log(1 + e^2) = 2.127 where torch returns 2.
    model, x = softplus_case()
    result = odt.compare(model, (x,), opset=14, export_kwargs=TORCHSCRIPT or None)
    assert result.exporter == "torchscript"
    rows = rows_by_label(result.modules)
    assert rows["stem"].passed is True
    assert rows["act"].passed is False and rows["act"].source == "own"
    assert rows["act"].onnx_nodes == ["/act/Softplus"]
    assert rows["head"].source == "inherited"
    assert result.first_divergent_module == "act"
    assert "first divergent module: act (Softplus)" in str(result).splitlines()[-1]


@pytest.mark.skipif(not HAS_DYNAMO, reason="this torch has no dynamo exporter")
def test_dynamo_exporter_keeps_softplus_threshold():
    # The dynamo exporter writes Softplus, Greater(threshold) and Where: the module agrees where
    # the TorchScript export above diverges.
    model, x = softplus_case()
    result = odt.compare(model, (x,), export_kwargs={"dynamo": True})
    assert result.exporter == "dynamo" and not result.notes
    rows = rows_by_label(result.modules)
    assert rows["act"].passed is True and rows["act"].max_abs_error < 1e-4, str(result)
    ops = [n.op_type for n in onnx.load_from_string(result.model).graph.node
           if n.name in rows["act"].onnx_nodes]
    assert {"Softplus", "Greater", "Where"} <= set(ops), ops
    assert producer(result.model, rows["act"].onnx_tensor).op_type == "Where"
    assert result.agree and result.first_divergent_module is None


def test_default_export_falls_back_to_torchscript_where_torch_export_fails():
    # Gated's `if` on a tensor value: torch.export (the dynamo exporter) refuses it.
    torch.manual_seed(0)
    model, x = Gated().eval(), torch.randn(2, 8)
    result = odt.compare(model, (x,))
    assert result.agree, str(result)
    assert result.exporter == "torchscript" and result.exported
    fell_back = [n for n in result.notes if "dynamo exporter" in n]
    if DYNAMO:
        assert len(fell_back) == 1 and "failed" in fell_back[0], result.notes
        assert "exported now by the TorchScript exporter" in str(result).splitlines()[0]
        assert f"note: {fell_back[0]}" in str(result)
        assert result.to_json()["exporter"] == "torchscript"
    else:
        assert not fell_back
    if HAS_DYNAMO:  # asked for by name: no fallback
        with pytest.raises(getattr(torch.onnx, "OnnxExporterError", Exception)):
            odt.capture(model, (x,), export_kwargs={"dynamo": True})


@pytest.mark.skipif(not HAS_DYNAMO, reason="this torch has no dynamo exporter")
def test_dynamo_opset_the_exporter_could_not_convert_to_is_noted():
    # Below opset 18 the dynamo exporter runs ONNX's version converter, which cannot convert
    # LayerNormalization: it keeps its own opset, which the capture says.
    model, args = transformer()
    cap = odt.capture(model, args, opset=14, export_kwargs={"dynamo": True})
    if cap.opset == 14:
        assert not cap.notes
    else:
        assert any("opset 14 was asked for" in n and f"opset {cap.opset}" in n
                   for n in cap.notes), cap.notes


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
    exported = export_bytes(model, (x,), opset_version=14, **TORCHSCRIPT)
    result = odt.compare(model, (-x,), onnx_model=exported)
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
                         {"scale": torch.full((1,), 2.0), "bias": torch.ones(4)},
                         opset=opset(14))
    assert result.agree, str(result)
    assert [o.key for o in result.outputs] == ["['y']", "['z'][0]", "['z'][1]"]
    rows = rows_by_label(result.modules)
    total = rows["<root>['z'][1]"]
    assert total.shape == () and producer(result.model, total.onnx_tensor).op_type == "ReduceSum"
    if not DYNAMO:
        assert total.onnx_node == "/ReduceSum"
