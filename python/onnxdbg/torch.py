"""onnxdbg.torch: compare a torch.nn.Module with its ONNX export, module by module.

The module runs once with hooks on every submodule; each call's output is mapped to the ONNX
tensor its exported scope produced and handed to :func:`onnxdbg.compare` as a golden value, so
the first module whose ONNX nodes compute something else is named (not only the final outputs,
as ``torch.onnx.verification`` does for TorchScript exports).

    >>> import torch, torchvision, onnxdbg.torch
    >>> model = torchvision.models.resnet18().eval()
    >>> result = onnxdbg.torch.compare(model, torch.randn(1, 3, 64, 64), backend="onnxruntime")
    >>> print(result)                 # one row per module call, the verdict last
    >>> result.first_divergent_module, result.first_divergent_nodes
    >>> result.to_html("resnet18.html")  # the graph painted with each module's error

The module is exported with the exporter ``torch.onnx.export`` uses by default
(:func:`default_exporter`): the TorchScript exporter up to torch 2.8, the dynamo exporter
(torch.export-based) from torch 2.9 on; when torch.export cannot export the module (Python
control flow on tensor values) the TorchScript exporter (``dynamo=False``) exports it instead,
which the result's header and notes say. ``export_kwargs={"dynamo": False}`` (or ``True``)
picks one exporter, without fallback. With the dynamo exporter no opset is forced: its default,
or the one asked for (below 18 it runs ONNX's version converter, which fails on some ops: the
export then keeps its own opset, and a note says so).

Mapping works on the TorchScript exporter's scoped node names ("/layer1/layer1.0/conv1/Conv",
one scope per call) and on the dynamo exporter's node metadata ("pkg.torch.onnx.name_scopes":
one scope for all calls of a module); for a fresh dynamo export, the exported program's module
stack tells the calls of a module apart, and which values leave each call. Needs torch and the
onnx package (to read node names, metadata and inferred shapes).
"""

from __future__ import annotations

import ast
import inspect
import io
import re
from collections import defaultdict
from dataclasses import dataclass
from typing import Any, ClassVar, Container, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np
import onnx
import torch

from ._bridge import (BridgeResult, CallTensor, Capture, ModelSource, check_compare_args,
                      compare_capture, model_bytes, opset_of, shape_label, shape_matches,
                      tensor_types, usage)
from ._bridge import LayerCall as ModuleCall
from ._bridge import LayerRow as ModuleRow
from ._bridge import OutputRow

__all__ = [
    "compare",
    "diagnose_export",
    "ExportDiagnosis",
    "ExportAttempt",
    "FailingModule",
    "capture",
    "default_exporter",
    "ModuleRow",
    "OutputRow",
    "ModuleCall",
    "TorchCapture",
    "TorchCompareResult",
]

# A module's run mapped onto its ONNX export (``model_class`` is the module's class; exporter
# "dynamo" or "torchscript": the one that made the model, from its node metadata or names for a
# given model); see onnxdbg._bridge.Capture.
TorchCapture = Capture

# Keys of the node metadata the torch 2.x dynamo exporter writes (metadata_props).
_NAME_SCOPES_KEY = "pkg.torch.onnx.name_scopes"
_NAMESPACE_KEY = "namespace"
_FX_NODE_KEY = "pkg.torch.onnx.fx_node"
_RULE_KEY = "pkg.onnxscript.rewriter.rule_name"  # the optimizer's rewrite rules on a node


# --- small helpers ---------------------------------------------------------------------------


def _flatten(obj: Any, key: str = "") -> Tuple[List[Tuple[str, Any]], List[str]]:
    """Tensors inside nested tuples, lists and dicts as (key, tensor), and the other leaves
    (key and type name; None is left out)."""
    tensors: List[Tuple[str, Any]] = []
    other: List[str] = []
    if isinstance(obj, torch.Tensor):
        tensors.append((key, obj))
    elif isinstance(obj, (tuple, list)):
        for i, v in enumerate(obj):
            t, o = _flatten(v, f"{key}[{i}]")
            tensors += t
            other += o
    elif isinstance(obj, dict):
        for k, v in obj.items():
            t, o = _flatten(v, f"{key}[{k!r}]")
            tensors += t
            other += o
    elif obj is not None:
        other.append(f"{key or 'output'}: {type(obj).__name__}")
    return tensors, other


def _to_numpy(t: torch.Tensor) -> np.ndarray:
    t = t.detach()
    if t.dtype == torch.bfloat16:
        t = t.float()
    return t.cpu().clone().numpy()


def _unqualified(path: str) -> str:
    """The scope name torch 1.x's TorchScript exporter gives a module: its path from the last
    non-numeric atom on ("layer1.0" for "layer1.0", "conv1" for "layer1.0.conv1")."""
    atoms = path.split(".")
    for i in range(len(atoms) - 1, -1, -1):
        if not atoms[i].isnumeric():
            return ".".join(atoms[i:])
    return path


# --- the framework run -------------------------------------------------------------------------


def _forward_args(module: torch.nn.Module, args: Tuple[Any, ...], kwargs: Mapping[str, Any],
                  graph_inputs: Sequence[str] = ()) -> List[Tuple[str, torch.Tensor]]:
    """The tensors the exporter turns into graph inputs, in its order: positional arguments,
    then keyword arguments: in the graph's order where its inputs are named after them (the
    dynamo exporter, which keeps the order they were given in), else in the order of
    forward's signature (the TorchScript exporter)."""
    flat, _ = _flatten(tuple(args))
    if kwargs:
        try:
            order = list(inspect.signature(module.forward).parameters)
        except (TypeError, ValueError):
            order = []
        if all(isinstance(v, torch.Tensor) and k in graph_inputs for k, v in kwargs.items()):
            order = list(graph_inputs)
        names = sorted(kwargs, key=lambda k: order.index(k) if k in order else len(order))
        for k in names:
            t, _ = _flatten(kwargs[k], k)
            flat += t
    return flat


def _run_hooked(module: torch.nn.Module, args: Tuple[Any, ...],
                kwargs: Mapping[str, Any]) -> Tuple[List[ModuleCall], Any]:
    """Runs ``module(*args, **kwargs)`` with hooks on every submodule; returns the calls in
    return order and the module's output."""
    calls: List[ModuleCall] = []
    open_calls: Dict[int, List[Tuple[int, List[CallTensor]]]] = defaultdict(list)
    keep: List[Any] = []  # the torch objects whose id() the calls hold, alive to the end
    counters: Dict[str, int] = defaultdict(int)
    starts = [0]

    def pre_hook(path: str):
        def hook(mod, inp):
            tensors, _ = _flatten(tuple(inp))
            keep.extend(t for _, t in tensors)
            recorded = [CallTensor(k, _to_numpy(t), id(t)) for k, t in tensors]
            open_calls[id(mod)].append((starts[0], recorded))
            starts[0] += 1
        return hook

    def post_hook(path: str):
        def hook(mod, inp, out):
            start, recorded = open_calls[id(mod)].pop()
            tensors, other = _flatten(out)
            keep.extend(t for _, t in tensors)
            counters[path] += 1
            calls.append(ModuleCall(
                path=path, class_name=type(mod).__name__, call_index=counters[path], calls=0,
                order=len(calls), start=start, inputs=recorded,
                outputs=[CallTensor(k, _to_numpy(t), id(t)) for k, t in tensors],
                skipped=other))
        return hook

    handles = []
    modes = {m: m.training for m in module.modules()}
    try:
        for path, sub in module.named_modules():
            handles.append(sub.register_forward_pre_hook(pre_hook(path)))
            handles.append(sub.register_forward_hook(post_hook(path)))
        module.eval()
        # Autograd stays on, as when the TorchScript exporter traces: under no_grad some modules
        # (nn.MultiheadAttention, nn.TransformerEncoderLayer) take a fused fast path that calls
        # none of their submodules and is not what was exported.
        with torch.enable_grad():
            out = module(*args, **kwargs)
    finally:
        for h in handles:
            h.remove()
        for m, mode in modes.items():
            m.train(mode)
    for c in calls:
        c.calls = counters[c.path]
    del keep
    return calls, out


def default_exporter() -> str:
    """The exporter ``torch.onnx.export`` uses when not told: "dynamo" (torch.export-based, the
    default from torch 2.9 on) or "torchscript" (torch 1.x to 2.8)."""
    try:
        param = inspect.signature(torch.onnx.export).parameters.get("dynamo")
    except (TypeError, ValueError):
        param = None
    return "dynamo" if param is not None and param.default is True else "torchscript"


def _has_dynamo() -> bool:
    try:
        return "dynamo" in inspect.signature(torch.onnx.export).parameters
    except (TypeError, ValueError):
        return False


# fx node name -> [(module path, call instance)], and call instance -> its leaving fx nodes.
_FxCalls = Tuple[Dict[str, List[Tuple[str, str]]], Dict[str, List[str]]]


@dataclass
class _Exported:
    """What :func:`_export` made: the model, the exporter that made it, notes, and (dynamo) the
    module calls of every node of the exported program ("pkg.torch.onnx.fx_node" name ->
    chain of (module path, call instance)), which the ONNX metadata does not tell apart."""

    model: bytes
    exporter: str
    notes: List[str]
    fx_calls: Optional[_FxCalls] = None


def _error_line(e: BaseException) -> str:
    """One line for an exception: its type and first line, and its cause's."""
    def one(x: BaseException) -> str:
        text = re.sub(r"\x1b\[[0-9;]*m", "", str(x)).strip()
        first = text.splitlines()[0].strip() if text else ""
        first = re.split(r"(?<=\.) ", first, maxsplit=1)[0].rstrip(".")  # its first sentence
        if len(first) > 160:
            first = first[:157] + "..."
        return f"{type(x).__name__}: {first}" if first else type(x).__name__
    line = one(e)
    cause = e.__cause__ or e.__context__
    if cause is not None:
        line += f" (caused by {one(cause)})"
    return line


def _instance(path: str, key: str) -> str:
    """A call instance of the exported program's nn_module_stack key ("L__self__b.relu@2": the
    third call of b.relu): "path" for the first call, "path@k" for call k + 1."""
    m = re.search(r"@(\d+)$", key)
    return f"{path}@{m.group(1)}" if m and m.group(1) != "0" else path


def _fx_chains(program: Any, module: torch.nn.Module) -> Optional[_FxCalls]:
    """The module calls of an ONNXProgram's exported program: fx node name -> [(module path,
    call instance)] (nn_module_stack keys count a module's calls: "...@1" is its second), and
    call instance -> the fx nodes whose values leave it (read outside it, or returned); None
    when the program or a module path is unknown."""
    ep = getattr(program, "exported_program", None)
    graph = getattr(ep, "graph", None)
    if graph is None:
        return None
    known = {p for p, _ in module.named_modules()}
    chains: Dict[str, List[Tuple[str, str]]] = {}
    for n in graph.nodes:
        stack = n.meta.get("nn_module_stack") if hasattr(n, "meta") else None
        if not stack:
            continue
        chain: List[Tuple[str, str]] = []
        for key, value in stack.items():
            path = value[0] if isinstance(value, (tuple, list)) and value else None
            if not isinstance(path, str) or path not in known:
                return None  # a strict-mode or future naming this code does not read
            if path:
                chain.append((path, _instance(path, str(key))))
        chains[n.name] = chain
    leaving: Dict[str, List[str]] = defaultdict(list)
    for n in graph.nodes:
        for _, inst in chains.get(n.name, []):
            for u in n.users:
                if u.op == "output" or inst not in {i for _, i in chains.get(u.name, [])}:
                    leaving[inst].append(n.name)
                    break
    return chains, dict(leaving)


def _export(module: torch.nn.Module, args: Tuple[Any, ...], kwargs: Mapping[str, Any],
            opset: Optional[int], export_kwargs: Optional[Mapping[str, Any]]) -> _Exported:
    """``torch.onnx.export`` into memory with the exporter it uses by default (the dynamo
    exporter from torch 2.9 on, falling back to the TorchScript exporter when torch.export
    fails) or the one ``export_kwargs["dynamo"]`` names (no fallback then)."""
    ex = dict(export_kwargs or {})
    if opset is not None:
        if "opset_version" in ex and ex["opset_version"] != opset:
            raise usage(f"opset={opset} contradicts export_kwargs opset_version="
                         f"{ex['opset_version']}")
        ex["opset_version"] = opset
    explicit = "dynamo" in ex
    dynamo = bool(ex.pop("dynamo")) if explicit else default_exporter() == "dynamo"
    if dynamo and not _has_dynamo():
        raise usage(f"export_kwargs dynamo=True: torch {torch.__version__}'s "
                     f"torch.onnx.export has no dynamo exporter")
    modes = {m: m.training for m in module.modules()}
    notes: List[str] = []
    try:
        if dynamo:
            try:
                return _export_dynamo(module, args, kwargs, ex)
            except Exception as e:  # noqa: BLE001 - torch.export fails in many ways
                if explicit:
                    raise
                first_error = e
            for m, mode in modes.items():
                m.train(mode)
            dropped = [k for k in _DYNAMO_ONLY if k in ex]
            for k in dropped:
                del ex[k]
            notes.append(f"exported with the TorchScript exporter (dynamo=False): the dynamo "
                         f"exporter, torch.onnx.export's default, failed: "
                         f"{_error_line(first_error)}"
                         + (f"; its options {', '.join(dropped)} were left out" if dropped
                            else ""))
            try:
                model = _export_torchscript(module, args, kwargs, ex, dynamo_param=True)
            except Exception as e:  # noqa: BLE001
                raise first_error from e
            return _Exported(model, "torchscript", notes)
        return _Exported(_export_torchscript(module, args, kwargs, ex,
                                             dynamo_param=_has_dynamo()), "torchscript", notes)
    finally:
        for m, mode in modes.items():
            m.train(mode)


# torch.onnx.export's options that only the dynamo exporter takes (dropped on the fallback).
_DYNAMO_ONLY = ("external_data", "dynamic_shapes", "custom_translation_table", "report",
                "optimize", "verify", "profile", "dump_exported_program", "artifacts_dir")


def _export_dynamo(module: torch.nn.Module, args: Tuple[Any, ...], kwargs: Mapping[str, Any],
                   ex: Dict[str, Any]) -> _Exported:
    ex = dict(ex)
    ex.setdefault("verbose", False)
    program = torch.onnx.export(module, tuple(args), kwargs=dict(kwargs) or None, dynamo=True,
                                **ex)
    model = program.model_proto.SerializeToString()
    notes: List[str] = []
    asked = ex.get("opset_version")
    got = opset_of(onnx.load_from_string(model))
    if asked is not None and got != asked:
        notes.append(f"opset {asked} was asked for, the dynamo exporter wrote opset {got} (its "
                     f"version converter could not convert the model; opset >= 18, or the "
                     f"exporter's default, avoids the conversion)")
    return _Exported(model, "dynamo", notes, _fx_chains(program, module))


def _export_torchscript(module: torch.nn.Module, args: Tuple[Any, ...],
                        kwargs: Mapping[str, Any], ex: Dict[str, Any],
                        dynamo_param: bool) -> bytes:
    call_args: Tuple[Any, ...] = tuple(args)
    if kwargs:
        call_args = call_args + (dict(kwargs),)
    elif call_args and isinstance(call_args[-1], dict):
        call_args = call_args + ({},)  # else the exporter reads the last dict as kwargs
    if dynamo_param:
        ex = dict(ex, dynamo=False)
    buf = io.BytesIO()
    torch.onnx.export(module, call_args, buf, **ex)
    return buf.getvalue()


# --- the ONNX side -------------------------------------------------------------------------------


class _Graph:
    """The main graph of a model with producers, consumers, types and each node's module
    scope."""

    def __init__(self, model: onnx.ModelProto, module: torch.nn.Module,
                 fx_calls: Optional[_FxCalls] = None):
        g = model.graph
        self.nodes = list(g.node)
        self.initializers = {t.name for t in g.initializer}
        self.inputs = [vi.name for vi in g.input if vi.name not in self.initializers]
        self.outputs = [vi.name for vi in g.output]
        self.producer: Dict[str, int] = {}
        self.consumers: Dict[str, List[int]] = defaultdict(list)
        for i, n in enumerate(self.nodes):
            for t in n.output:
                if t:
                    self.producer[t] = i
            for t in n.input:
                if t:
                    self.consumers[t].append(i)
        self.constant = {i for i, n in enumerate(self.nodes)
                         if n.op_type == "Constant" and n.domain in ("", "ai.onnx")}
        self.types = tensor_types(model)
        self._module = module
        self._tree = dict(module.named_modules())
        self._by_unq: Dict[str, List[str]] = defaultdict(list)
        for p in self._tree:
            if p:
                self._by_unq[_unqualified(p)].append(p)
        # The exported program's call instances (a fresh dynamo export): how many calls of
        # each module it has nodes for.
        self.fx_chains = fx_calls[0] if fx_calls is not None else None
        self.fx_leaving: Dict[str, List[str]] = fx_calls[1] if fx_calls is not None else {}
        self._fx_calls: Dict[str, set] = defaultdict(set)
        for chain in (self.fx_chains or {}).values():
            for path, inst in chain:
                self._fx_calls[path].add(inst)
        # Per node: the chain of (module path, scope instance) from outermost to innermost.
        self.chains: List[List[Tuple[str, str]]] = [self._scope(n) for n in self.nodes]
        # Whether scopes come from the dynamo exporter's metadata (one scope for all calls of
        # a module) rather than the TorchScript exporter's names (one scope per call).
        self.dynamo = any(p.key in (_NAME_SCOPES_KEY, _NAMESPACE_KEY)
                          for n in self.nodes for p in getattr(n, "metadata_props", []))
        # Whether a fresh export's program told the calls apart ("path@k" instances).
        self.exact = self.fx_chains is not None and self.dynamo
        # Whether the exporter named each node's output after its fx node, so that a call's
        # leaving fx nodes name its ONNX output tensors.
        named = [n for n in self.nodes if _fx_name(n)] if self.exact else []
        self.fx_named = bool(named) and 2 * sum(_fx_name(n) in n.output
                                                for n in named) >= len(named)
        self.instances: Dict[str, List[str]] = defaultdict(list)  # module path -> instances
        self.instance_nodes: Dict[str, List[int]] = defaultdict(list)
        for i, chain in enumerate(self.chains):
            for path, inst in chain:
                if inst not in self.instance_nodes:
                    self.instances[path].append(inst)
                self.instance_nodes[inst].append(i)

    # Scope of a node: the dynamo exporter's metadata when present, else the TorchScript
    # exporter's node name "/layer1/layer1.0/conv1/Conv".
    def _scope(self, node: onnx.NodeProto) -> List[Tuple[str, str]]:
        meta = {p.key: p.value for p in getattr(node, "metadata_props", [])}
        if self.fx_chains is not None:
            fx = _fx_name(node)
            if fx in self.fx_chains:
                return list(self.fx_chains[fx])
        chain = scope_chain(node.name, meta, self._resolve, self._tree)
        if self.fx_chains is not None:
            # A node the program does not know: its call is unknown where there are several.
            chain = [(p, i if len(self._fx_calls.get(p, ())) <= 1 else p + "@?")
                     for p, i in chain]
        return chain

    def _resolve(self, parent: str, component: str) -> Optional[str]:
        """The module a TorchScript scope component names, below ``parent`` if possible."""
        names = [component]
        m = re.fullmatch(r"(.+)_(\d+)", component)
        if m:
            names.append(m.group(1))
        for name in names:
            matches = self._by_unq.get(name, [])
            if not matches:
                continue
            prefix = parent + "." if parent else ""
            below = [p for p in matches if p.startswith(prefix)]
            children = [p for p in below if "." not in p[len(prefix):]]
            for group in (children, below, matches):
                if len(group) == 1:
                    return group[0]
        return None

    def node_name(self, i: int) -> str:
        n = self.nodes[i]
        return n.name or f"{n.op_type}#{i}"


def _fx_name(node: onnx.NodeProto) -> str:
    """The fx node a dynamo-exported node came from ("pkg.torch.onnx.fx_node": "%relu_2 : ...")."""
    for p in getattr(node, "metadata_props", []):
        if p.key == _FX_NODE_KEY:
            m = re.match(r"%(\S+)", p.value)
            return m.group(1) if m else ""
    return ""


def _full_paths(entries: List[str], resolve,
                known: Optional[Container[str]]) -> List[Tuple[str, str]]:
    """(module path, instance) of the dynamo exporter's scope entries: full module paths (a
    call marked "path@1" is read as "path", the instance keeps the mark)."""
    chain: List[Tuple[str, str]] = []
    parent = ""
    for e in entries:
        path = re.sub(r"@\d+$", "", e)
        if known is None or path not in known:
            path = resolve(parent, _unqualified(path)) or path
        chain.append((path, e))
        parent = path
    return chain


def scope_chain(name: str, metadata: Mapping[str, str], resolve,
                known: Optional[Container[str]] = None) -> List[Tuple[str, str]]:
    """The module scopes an exported node belongs to, outermost first, as (module path,
    scope instance) pairs; the instance tells calls of one module apart where the export
    does (the TorchScript exporter's "/b/relu_1" scopes; the dynamo exporter's metadata names
    one scope for all calls of a module: :func:`capture` tells them apart otherwise).

    Args:
        name: the node's name (the TorchScript exporter's "/layer1/layer1.0/conv1/Conv").
        metadata: the node's metadata_props; the torch 2.x dynamo exporter writes
            "pkg.torch.onnx.name_scopes" (a Python list literal of full module paths, root ""
            first and the node's fx node name last: "['', 'layer1', 'layer1.0', 'layer1.0.relu',
            'relu_1']"; an entry "path@1" would be read as a call mark) and "namespace"
            (": root class/path: class/.../fx node: op").
        resolve: ``resolve(parent_path, component)`` -> module path or None, for the
            TorchScript name components (which are module paths shortened by the exporter).
        known: the module paths there are; a metadata entry that is one is taken as it is
            (None: every entry goes through ``resolve``).

    Returns:
        [] for a node outside every module scope (the root's own nodes, exporter-made
        nodes such as the Identity of a shared initializer).
    """
    scopes = metadata.get(_NAME_SCOPES_KEY)
    if scopes:
        try:
            entries = ast.literal_eval(scopes)
        except (SyntaxError, ValueError):
            entries = None
        if isinstance(entries, (list, tuple)) and len(entries) >= 2:
            return _full_paths([str(e) for e in entries[1:-1] if e], resolve, known)
    namespace = metadata.get(_NAMESPACE_KEY)
    if namespace:
        parts = [p.split(":", 1)[0].strip() for p in namespace.split("/")]
        return _full_paths([p for p in parts[1:-1] if p], resolve, known)
    if not name.startswith("/"):
        return []
    chain: List[Tuple[str, str]] = []
    parent = ""
    key = ""
    for comp in name.split("/")[1:-1]:
        key += "/" + comp
        path = resolve(parent, comp)
        if path is None:
            break
        chain.append((path, key))
        parent = path
    return chain


# --- mapping -------------------------------------------------------------------------------------


class _Mapper:
    """Maps each module call's outputs to ONNX tensors (see :func:`capture`)."""

    def __init__(self, graph: _Graph, calls: List[ModuleCall]):
        self.g = graph
        self.calls = calls
        # (call order, output key) -> (tensor, nodes, note)
        self.mapped: Dict[Tuple[int, str], Tuple[str, List[int], str]] = {}
        self.reasons: Dict[Tuple[int, str], str] = {}
        self.instance_of: Dict[int, str] = {}
        self.fused_into: Dict[Tuple[int, str], str] = {}  # unmapped output -> the module's label

    def run(self) -> None:
        by_path: Dict[str, List[ModuleCall]] = defaultdict(list)
        for c in self.calls:
            by_path[c.path].append(c)
        for path, cs in by_path.items():
            insts = self.g.instances.get(path, [])
            if path == "":
                continue
            if self.g.exact and self._exact_calls(path, cs, insts):
                continue
            how = ""
            if self.g.dynamo and len(insts) == 1 and len(cs) > 1:
                insts, how = self._split_runs(path, insts[0], len(cs))
            if len(insts) == len(cs):
                for c, inst in zip(cs, insts):
                    self.instance_of[c.order] = inst
            for c in cs:
                if c.order in self.instance_of:
                    self._map_scope(c, self.instance_of[c.order], how)
                elif not insts:
                    for o in c.outputs:
                        self.reasons[(c.order, o.key)] = "no ONNX nodes in its scope"
                else:
                    why = (f"called {len(cs)} times but exported in {len(insts)} scope"
                           f"{'s' if len(insts) != 1 else ''}")
                    if len(insts) < len(cs):
                        why += (" (identical calls merged by the exporter, or one scope for "
                                "all calls)")
                    if self.g.dynamo and len(insts) == 1:
                        why = (f"called {len(cs)} times; the dynamo exporter's metadata names "
                               f"one scope for all calls and its nodes do not split into "
                               f"{len(cs)} runs (calls merged or removed by its optimizer)")
                    for o in c.outputs:
                        self.reasons[(c.order, o.key)] = why
        self._map_root()
        self._fusions()
        self._same_objects()

    def _exact_calls(self, path: str, cs: List[ModuleCall], insts: List[str]) -> bool:
        """Maps the calls of ``path`` to the exported program's call instances ("path" for the
        first call, "path@k" for call k + 1); False when they do not fit the calls."""
        def index(inst: str) -> Optional[int]:
            if inst == path:
                return 1
            m = re.fullmatch(re.escape(path) + r"@(\d+)", inst)
            return int(m.group(1)) + 1 if m else None

        known = [index(i) for i in insts if not i.endswith("@?")]
        if any(k is None or k > len(cs) for k in known):
            return False
        for c in cs:
            inst = path if c.call_index == 1 else f"{path}@{c.call_index - 1}"
            if inst in self.g.instance_nodes:
                self.instance_of[c.order] = inst
                self._map_scope(c, inst)
                continue
            why = "no ONNX nodes in its scope"
            if insts:
                why += (f" (the exported program has nodes for {len(known)} of its {len(cs)} "
                        f"calls: this call's were merged into another's or removed by the "
                        f"exporter's optimizer)")
            for o in c.outputs:
                self.reasons[(c.order, o.key)] = why
        return True

    def _split_runs(self, path: str, inst: str, calls: int) -> Tuple[List[str], str]:
        """The nodes of a module's one dynamo scope split where nodes of other scopes come
        between them: one instance per run when there are as many runs as calls (a module's
        calls are contiguous in the exported program, in call order)."""
        mine = set(self.g.instance_nodes[inst])
        nodes = sorted(i for i in mine if i not in self.g.constant)
        runs: List[List[int]] = []
        for i in nodes:
            if runs and not any(k not in mine and k not in self.g.constant
                                for k in range(runs[-1][-1] + 1, i)):
                runs[-1].append(i)
            else:
                runs.append([i])
        if len(runs) != calls:
            return [inst], ""
        names = []
        for k, run in enumerate(runs):
            name = f"{inst}#run{k + 1}"
            self.g.instance_nodes[name] = run
            names.append(name)
        return names, (f"calls told apart by graph position: the export's metadata names one "
                       f"scope for all {calls} calls of {path}, its nodes form {calls} runs")

    def _has_scope(self, c: ModuleCall) -> bool:
        """Whether the call has ONNX nodes of its own scope."""
        if c.order in self.instance_of:
            return True
        return not self.g.exact and c.path in self.g.instances

    def _nodes(self, inst: str) -> List[int]:
        return [i for i in self.g.instance_nodes[inst] if i not in self.g.constant]

    def _map_scope(self, c: ModuleCall, inst: str, how: str = "") -> None:
        nodes = self._nodes(inst)
        inside = set(self.g.instance_nodes[inst])
        graph_outputs = set(self.g.outputs)
        leaving: List[str] = []  # produced inside, read outside or a graph output, in order
        for i in nodes:
            for t in self.g.nodes[i].output:
                if not t:
                    continue
                if t in graph_outputs or any(j not in inside for j in self.g.consumers[t]):
                    leaving.append(t)
        gone = ""
        if self.g.fx_named and self.g.fx_leaving.get(inst):
            # The exported program says which values leave the call; the exporter named the
            # ONNX tensors after them. A leaving tensor of the scope that is none of them is
            # something else (the optimizer merged the call's last nodes into later ones).
            fx_out = self.g.fx_leaving[inst]
            leaving = [t for t in fx_out if t in self.g.producer]
            if not leaving:
                gone = (f"its output (fx node {', '.join(fx_out)}) is not in the ONNX graph: "
                        f"the exporter's optimizer removed or merged the nodes computing it")
        taken: set = set()
        for o in c.outputs:
            want_dtype = o.value.dtype
            exact, unknown = [], []
            for t in leaving:
                dtype, shape = self.g.types.get(t, (None, None))
                if dtype is not None and dtype != want_dtype:
                    continue
                if shape is None or dtype is None:
                    unknown.append(t)
                elif shape_matches(shape, o.value.shape):
                    exact.append(t)
            cands = [t for t in (exact or unknown) if t not in taken]
            same_shape = [p for p in c.outputs
                          if p.value.shape == o.value.shape and p.value.dtype == want_dtype]
            if not nodes:
                self.reasons[(c.order, o.key)] = "its scope has only constants"
            elif gone:
                self.reasons[(c.order, o.key)] = gone
            elif not cands:
                self.reasons[(c.order, o.key)] = (
                    f"no tensor of shape {shape_label(o.value.shape)} {want_dtype} leaves its "
                    f"scope ({len(nodes)} nodes; inlined, folded into constants or reshaped "
                    f"by the exporter)")
            elif len(same_shape) > 1 and len(cands) > 1:
                self.reasons[(c.order, o.key)] = (
                    f"ambiguous: {len(cands)} tensors of shape {shape_label(o.value.shape)} "
                    f"leave its scope for {len(same_shape)} outputs of that shape")
            else:
                t = cands[-1]
                taken.add(t)
                self.mapped[(c.order, o.key)] = (t, nodes, how)

    def _map_root(self) -> None:
        roots = [c for c in self.calls if c.path == ""]
        if len(roots) != 1:
            return
        c = roots[0]
        nodes = [i for i in range(len(self.g.nodes)) if i not in self.g.constant]
        if len(c.outputs) != len(self.g.outputs):
            for o in c.outputs:
                self.reasons[(c.order, o.key)] = (
                    f"the module returns {len(c.outputs)} tensors, the graph has "
                    f"{len(self.g.outputs)} outputs")
            return
        for o, t in zip(c.outputs, self.g.outputs):
            dtype, shape = self.g.types.get(t, (None, None))
            if (dtype is not None and dtype != o.value.dtype) or (
                    shape is not None and not shape_matches(shape, o.value.shape)):
                self.reasons[(c.order, o.key)] = (
                    f"graph output '{t}' is {shape_label(shape or ())} {dtype}, the module's "
                    f"{shape_label(o.value.shape)} {o.value.dtype}")
            else:
                self.mapped[(c.order, o.key)] = (t, nodes, "")

    def _fusions(self) -> None:
        """A call without ONNX nodes that took the previous call's output and returned a new
        tensor was fused by the exporter into that call's nodes (Conv + BatchNorm in eval):
        the ONNX tensor is its output, not the previous call's."""
        by_order = {c.order: c for c in self.calls}
        for c in ([] if self.g.dynamo else self.calls):
            if c.path == "" or self._has_scope(c) or len(c.outputs) != 1:
                continue
            prev = by_order.get(c.order - 1)
            if prev is None or len(prev.outputs) != 1 or len(c.inputs) < 1:
                continue
            out, pout = c.outputs[0], prev.outputs[0]
            if out.obj_id in {i.obj_id for i in c.inputs}:
                continue  # returns its input: an identity, handled below
            if c.inputs[0].obj_id != pout.obj_id or (prev.order, pout.key) not in self.mapped:
                continue
            if np.array_equal(out.value, c.inputs[0].value):
                continue  # computes nothing on this input
            t, _, _ = self.mapped[(prev.order, pout.key)]
            dtype, shape = self.g.types.get(t, (None, None))
            if (dtype is not None and dtype != out.value.dtype) or (
                    shape is not None and not shape_matches(shape, out.value.shape)):
                continue
            producer = self.g.producer.get(t)
            pnodes = [producer] if producer is not None else []
            pname = self.g.node_name(producer) if producer is not None else t
            del self.mapped[(prev.order, pout.key)]
            self.reasons[(prev.order, pout.key)] = (
                f"fused by the exporter with {c.path} ({c.class_name}) into {pname}: its own "
                f"output is not in the ONNX graph")
            self.fused_into[(prev.order, pout.key)] = c.label
            self.mapped[(c.order, out.key)] = (
                t, pnodes, f"fused by the exporter into {pname} with {prev.path} "
                f"({prev.class_name})")
            self.reasons.pop((c.order, out.key), None)
        # The dynamo exporter fuses the other way round: the fused node (Conv + BatchNorm)
        # carries the second module's scope, the first has no nodes.
        for c in self.calls:
            if c.path == "" or self._has_scope(c) or len(c.outputs) != 1:
                continue
            nxt = by_order.get(c.order + 1)
            out = c.outputs[0]
            if (nxt is None or not nxt.inputs or nxt.inputs[0].obj_id != out.obj_id
                    or out.obj_id in {i.obj_id for i in c.inputs}
                    or len(nxt.outputs) != 1 or (nxt.order, nxt.outputs[0].key) not in self.mapped):
                continue
            t, _, _ = self.mapped[(nxt.order, nxt.outputs[0].key)]
            producer = self.g.producer.get(t)
            if producer is None:
                continue
            node = self.g.nodes[producer]
            meta = {p.key: p.value for p in getattr(node, "metadata_props", [])}
            rules = [r.strip() for r in meta.get(_RULE_KEY, "").split(",")]
            fusing = [r for r in dict.fromkeys(rules) if r.startswith("Fuse")]
            if not fusing:
                continue
            self.reasons[(c.order, out.key)] = (
                f"fused by the exporter ({', '.join(fusing)}) with {nxt.path} "
                f"({nxt.class_name}) into {self.g.node_name(producer)}: its own output is not "
                f"in the ONNX graph")
            self.fused_into[(c.order, out.key)] = nxt.label

    def _same_objects(self) -> None:
        """A call that returned the very tensor an earlier call returned (a container ending in
        a submodule) maps to that call's ONNX tensor; one that returned its input is an
        identity at inference (Dropout in eval, nn.Identity) with no ONNX nodes of its own."""
        latest: Dict[int, Tuple[ModuleCall, str]] = {}
        for c in self.calls:
            for o in c.outputs:
                k = (c.order, o.key)
                if k not in self.mapped:
                    if o.obj_id in {i.obj_id for i in c.inputs} and not self._has_scope(c):
                        self.reasons[k] = ("returns its input unchanged (an identity at "
                                           "inference): no ONNX nodes of its own")
                    elif o.obj_id in latest:
                        src, skey = latest[o.obj_id]
                        t, nodes, _ = self.mapped[(src.order, skey)]
                        self.mapped[k] = (t, nodes, f"the same tensor as {src.label}{skey}")
                        self.reasons.pop(k, None)
                if k in self.mapped:
                    latest[o.obj_id] = (c, o.key)


def _capture_args(module: torch.nn.Module, args: Union[Tuple[Any, ...], Any],
                  kwargs: Optional[Mapping[str, Any]], onnx_model: Optional[ModelSource],
                  opset: Optional[int], export_kwargs: Optional[Mapping[str, Any]]
                  ) -> Tuple[Tuple[Any, ...], Dict[str, Any]]:
    """Checks :func:`capture`'s arguments; returns ``args`` as a tuple and ``kwargs`` as a
    dict."""
    if not isinstance(module, torch.nn.Module):
        raise usage(f"module must be a torch.nn.Module, not {type(module).__name__}")
    if isinstance(module, torch.jit.ScriptModule):
        raise usage("module is a ScriptModule: its submodules run without Python hooks; pass "
                     "the Python module")
    if not isinstance(args, tuple):
        args = (args,) if not isinstance(args, list) else tuple(args)
    kwargs = dict(kwargs or {})
    if onnx_model is not None and (opset is not None or export_kwargs):
        raise usage("opset and export_kwargs are for the export; with onnx_model nothing is "
                     "exported")
    return args, kwargs


def _capture_model(module: torch.nn.Module, args: Tuple[Any, ...], kwargs: Mapping[str, Any],
                   onnx_model: Optional[ModelSource], opset: Optional[int],
                   export_kwargs: Optional[Mapping[str, Any]], notes: List[str]
                   ) -> Tuple[bytes, onnx.ModelProto, _Graph, Optional[str]]:
    """The model to map: exported now (the export's notes appended to ``notes``) or
    ``onnx_model`` loaded; returns its bytes, proto, graph and the exporter that made it (for
    a given model, the one its node metadata or names show; None when neither does)."""
    if onnx_model is None:
        exported = _export(module, args, kwargs, opset, export_kwargs)
        data = exported.model
        notes += exported.notes
        proto = onnx.load_from_string(data)
        graph = _Graph(proto, module, exported.fx_calls)
        exporter: Optional[str] = exported.exporter
    else:
        data = model_bytes(onnx_model)
        proto = onnx.load_from_string(data)
        graph = _Graph(proto, module)
        exporter = ("dynamo" if graph.dynamo else "torchscript"
                    if any(n.name.startswith("/") for n in graph.nodes) else None)
    return data, proto, graph, exporter


def _graph_inputs(module: torch.nn.Module, args: Tuple[Any, ...], kwargs: Mapping[str, Any],
                  graph: _Graph) -> Dict[str, np.ndarray]:
    """Graph input name -> the tensor of ``args``/``kwargs`` it stands for (numpy), checked
    against the graph's inputs: their number, dtypes and shapes."""
    flat_inputs = _forward_args(module, args, kwargs, graph.inputs)
    if len(flat_inputs) != len(graph.inputs):
        raise usage(
            f"the ONNX graph has {len(graph.inputs)} inputs ({', '.join(graph.inputs)}) but "
            f"args and kwargs hold {len(flat_inputs)} tensors: pass the arguments the model "
            f"was exported with")
    inputs: Dict[str, np.ndarray] = {}
    for name, (key, t) in zip(graph.inputs, flat_inputs):
        dtype, shape = graph.types.get(name, (None, None))
        value = _to_numpy(t)
        if dtype is not None and dtype != value.dtype:
            raise usage(f"graph input '{name}' is {dtype}, argument {key or 'args'} is "
                         f"{value.dtype}")
        if shape is not None and not shape_matches(shape, value.shape):
            raise usage(f"graph input '{name}' has shape {shape_label(shape)}, argument "
                         f"{key or 'args'} {shape_label(value.shape)}")
        inputs[name] = value
    return inputs


def _module_rows(calls: Sequence[ModuleCall], mapper: _Mapper, graph: _Graph,
                 notes: List[str]) -> Tuple[List[ModuleRow], Dict[str, np.ndarray]]:
    """One row per tensor output of each call with its mapping, and the golden values of the
    mapped ONNX tensors (an output whose ONNX tensor already holds an earlier output's other
    value stays unmapped); the calls' non-tensor outputs are appended to ``notes``."""
    rows: List[ModuleRow] = []
    golden: Dict[str, np.ndarray] = {}
    owner: Dict[str, str] = {}
    for c in calls:
        for s in c.skipped:
            notes.append(f"{c.label}: output {s} is not a tensor; not compared")
        for o in c.outputs:
            k = (c.order, o.key)
            row = ModuleRow(path=c.path, class_name=c.class_name, call_index=c.call_index,
                            calls=c.calls, output_key=o.key, onnx_nodes=[], onnx_tensor=None,
                            shape=tuple(o.value.shape), dtype=str(o.value.dtype), mapped=False,
                            reason=mapper.reasons.get(k, "not mapped"),
                            fused_into=mapper.fused_into.get(k))
            if k in mapper.mapped:
                t, nodes, how = mapper.mapped[k]
                if t in golden and not np.array_equal(golden[t], o.value, equal_nan=True):
                    row.reason = (f"its ONNX tensor '{t}' is also {owner[t]}'s output, which "
                                  f"holds another value (updated in place?)")
                else:
                    golden.setdefault(t, o.value)
                    owner.setdefault(t, row.label)
                    row.mapped = True
                    row.onnx_tensor = t
                    row.onnx_nodes = [graph.node_name(i) for i in nodes]
                    if t in graph.producer:
                        row.onnx_node = graph.node_name(graph.producer[t])
                    row.reason = how
            rows.append(row)
    return rows, golden


def _output_rows(calls: Sequence[ModuleCall], graph: _Graph, golden: Dict[str, np.ndarray],
                 notes: List[str]) -> List[OutputRow]:
    """The graph outputs with the root module's output values (added to ``golden``), or none
    and a note in ``notes`` when the module returns another number of tensors."""
    outputs: List[OutputRow] = []
    root = [c for c in calls if c.path == ""]
    if root and len(root[0].outputs) == len(graph.outputs):
        for o, name in zip(root[0].outputs, graph.outputs):
            outputs.append(OutputRow(name=name, key=o.key, shape=tuple(o.value.shape),
                                     dtype=str(o.value.dtype)))
            golden.setdefault(name, o.value)
    else:
        notes.append(f"final outputs not compared: the module returns "
                     f"{len(root[0].outputs) if root else 0} tensors, the graph has "
                     f"{len(graph.outputs)} outputs")
    return outputs


def capture(module: torch.nn.Module, args: Union[Tuple[Any, ...], Any],
            kwargs: Optional[Mapping[str, Any]] = None, *,
            onnx_model: Optional[ModelSource] = None, opset: Optional[int] = None,
            export_kwargs: Optional[Mapping[str, Any]] = None) -> TorchCapture:
    """Runs ``module`` with hooks, exports it (unless ``onnx_model`` is given) and maps every
    module call's output tensors to the ONNX tensors that stand for them.

    A call's output maps to the last tensor produced inside its exported scope (node names
    "/layer1/layer1.0/conv1/Conv" of the TorchScript exporter, the "pkg.torch.onnx.name_scopes"
    metadata of the dynamo exporter) that leaves the scope (read by a node outside it, or a
    graph output) with the output's dtype and shape. The k-th call of a module takes the k-th
    scope of that module. A module the exporter fused into its predecessor (BatchNorm after Conv)
    takes the fused node's output and the predecessor is "not mapped"; a container returning a
    submodule's tensor takes that submodule's ONNX tensor. Anything else ambiguous is "not
    mapped" with the reason.

    Args:
        module: the torch.nn.Module; run in eval mode (its modes restored after) with autograd
            on, as the exporter traces it.
        args: positional arguments of ``module.forward`` (a tuple, or one tensor); tensors
            nested in tuples, lists and dicts become graph inputs in order.
        kwargs: keyword arguments of ``forward`` (graph inputs after ``args``, in signature
            order).
        onnx_model: the export to check (path, bytes or onnx.ModelProto); None exports with
            ``torch.onnx.export`` into memory, with its default exporter (the dynamo exporter
            from torch 2.9 on, the TorchScript exporter when torch.export fails; see the module
            docstring). A given dynamo export has only the node metadata: the calls of a module
            called more than once are told apart by graph position where its nodes form one
            run per call, else not mapped.
        opset: ``opset_version`` for the export (None: the exporter's default).
        export_kwargs: more keyword arguments for ``torch.onnx.export`` (e.g. ``input_names``,
            ``dynamic_axes``; ``dynamo=False`` for the TorchScript exporter, ``dynamo=True``
            for the dynamo exporter without fallback; the dynamo exporter runs with
            ``verbose=False`` unless told).

    Returns:
        a :class:`TorchCapture`: the model bytes, graph inputs (numpy), calls, mapping rows and
        the golden dict (ONNX tensor name -> the framework's numpy value, float32 for float32).

    Raises:
        onnxdbg.UsageError: ``module`` is not a torch.nn.Module, ``onnx_model`` is no model,
            or the graph's inputs do not match the tensors in ``args``/``kwargs``.
        Whatever ``module.forward`` or ``torch.onnx.export`` raise (the dynamo exporter's
        error, chained to the TorchScript exporter's, when the fallback fails too).
    """
    args, kwargs = _capture_args(module, args, kwargs, onnx_model, opset, export_kwargs)
    notes: List[str] = []
    data, proto, graph, exporter = _capture_model(module, args, kwargs, onnx_model, opset,
                                                  export_kwargs, notes)
    inputs = _graph_inputs(module, args, kwargs, graph)

    calls, _ = _run_hooked(module, args, kwargs)
    mapper = _Mapper(graph, calls)
    mapper.run()

    rows, golden = _module_rows(calls, mapper, graph, notes)
    outputs = _output_rows(calls, graph, golden, notes)
    return TorchCapture(model=data, inputs=inputs, calls=calls, rows=rows, golden=golden,
                        outputs=outputs, notes=notes, model_class=type(module).__name__,
                        opset=opset_of(proto), node_count=len(graph.nodes), exporter=exporter,
                        exported=onnx_model is None)


# --- comparing -----------------------------------------------------------------------------------


@dataclass(repr=False)
class TorchCompareResult(BridgeResult):
    """A module compared with its ONNX export, module call by module call (the bridge core's
    :class:`onnxdbg._bridge.BridgeResult` in PyTorch's words).

    Attributes (besides the core's):
        modules: one :class:`ModuleRow` per tensor output of each module call, in the order
            the calls returned (children before their parents); the same list as ``rows``.
        first_divergent_module: dotted path of the first module (execution order) whose own
            ONNX nodes, re-run alone on the framework's inputs, are outside tolerance ("" is the
            root module); None when no module is.
        module_class: the module's class.
        exporter, exported: "dynamo" or "torchscript", and whether it was exported now.
    """

    UNIT: ClassVar[str] = "module"
    FRAMEWORK: ClassVar[str] = "pytorch"
    TITLE: ClassVar[str] = "onnxdbg.torch"
    MADE_BY: ClassVar[str] = "ONNX export"
    EXPORTERS: ClassVar[Mapping[str, str]] = {"dynamo": "dynamo exporter",
                                              "torchscript": "TorchScript exporter"}

    @property
    def modules(self) -> List[ModuleRow]:
        """The module rows (``rows``)."""
        return self.rows

    @property
    def first_divergent_module(self) -> Optional[str]:
        """The first divergent module's path (``first_divergent``)."""
        return self.first_divergent

    @property
    def module_class(self) -> str:
        """The module's class name (``model_class``)."""
        return self.model_class


def compare(module: torch.nn.Module, args: Union[Tuple[Any, ...], Any],
            kwargs: Optional[Mapping[str, Any]] = None, *,
            onnx_model: Optional[ModelSource] = None, opset: Optional[int] = None,
            backend: str = "reference", atol: float = 1e-4, rtol: float = 1e-3,
            export_kwargs: Optional[Mapping[str, Any]] = None) -> TorchCompareResult:
    """Compares ``module`` with its ONNX export module by module and names the first module
    whose ONNX nodes compute something else.

    The module runs once with hooks (see :func:`capture` for how its calls are mapped to ONNX
    tensors); the ONNX model runs on ``backend`` with the same inputs, and every mapped
    tensor and final output is compared with the framework's value (layerwise
    :func:`onnxdbg.compare` with those values as golden). A module output outside tolerance is
    re-run alone (its ONNX nodes extracted, fed the framework's values of their inputs, or
    the reference's where the framework has none, which the row's note says): "own" when it
    still diverges, "inherited" when the error came from upstream.

    Args:
        module: a torch.nn.Module (run in eval mode; its modes are restored).
        args: positional arguments of ``forward`` (a tuple, or one tensor).
        kwargs: keyword arguments of ``forward``.
        onnx_model: an earlier export to check (path, bytes, onnx.ModelProto); None: exported
            now with ``torch.onnx.export`` into memory.
        opset: ``opset_version`` for the export (None: the exporter's default).
        backend: the onnxdbg backend that runs the ONNX model ("reference", "onnxruntime",
            with options as on the command line).
        atol, rtol: |onnx - torch| <= atol + rtol * |torch| element-wise (units of each tensor).
        export_kwargs: more keyword arguments for ``torch.onnx.export`` (``dynamo=False``:
            the TorchScript exporter; see :func:`capture`).

    Returns:
        a :class:`TorchCompareResult`; ``str()`` prints the tables and the verdict line.

    Raises:
        onnxdbg.UsageError: misuse (see :func:`capture`; a backend that is not a string).
        onnxdbg.Error: the ONNX model cannot be loaded or run.
    """
    check_compare_args(backend, atol, rtol)
    cap = capture(module, args, kwargs, onnx_model=onnx_model, opset=opset,
                  export_kwargs=export_kwargs)
    return compare_capture(cap, TorchCompareResult, backend, atol, rtol)


# Export failures diagnosed before an ONNX file exists (python/onnxdbg/torch_export.py); imported
# last, as it uses this module's exporter helpers.
from .torch_export import (  # noqa: E402
    ExportAttempt,
    ExportDiagnosis,
    FailingModule,
    diagnose_export,
)
