"""onnxdbg.tf: compare a Keras model with its tf2onnx conversion, layer by layer, and say why a
model does not convert.

The model runs once in TensorFlow with every layer's ``call`` recorded; each layer call's output
is mapped to the ONNX tensor tf2onnx made for it (by the layer's name scope in the node names,
and the scopes of the constants a node reads), transposed into the ONNX tensor's layout where
tf2onnx changed it (NHWC -> NCHW), and handed to :func:`onnxdbg.compare` as a golden value, so
the first layer whose ONNX nodes compute something else is named:

    >>> import keras, onnxdbg
    >>> model = keras.applications.MobileNetV2(input_shape=(96, 96, 3), weights=None)
    >>> result = onnxdbg.tf.compare(model, x)      # x: a numpy array, 1x96x96x3 float32
    >>> print(result)                             # one row per layer call, the verdict last
    >>> result.first_divergent_layer, result.first_divergent_nodes
    >>> result.to_html("mobilenetv2.html")        # the graph painted with each layer's error

Without ``onnx_model`` the model is converted in memory with ``tf2onnx.convert.from_keras``
(``from_function`` when that fails, for subclassed models); a SavedModel folder is compared by the
layer scopes of its frozen graph. Conversion failures are diagnosed by
:func:`diagnose_conversion` (``onnxdbg.tf_convert``). Needs TensorFlow and tf2onnx (``pip install
onnxdbg[tf]``); ``import onnxdbg`` alone never imports TensorFlow.
"""

from __future__ import annotations

import itertools
import logging
import os
import re
from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Any, ClassVar, Dict, List, Mapping, Optional, Sequence, Set, Tuple

import numpy as np
import onnx
import tensorflow as tf
import tf2onnx

import onnxdbg

from ._bridge import (BridgeResult, CallTensor, Capture, LayerCall, LayerRow, ModelSource,
                      OutputRow, check_compare_args, compare_capture, model_bytes, opset_of,
                      shape_label, tensor_types, usage)
from .tf_convert import (ConversionAttempt, ConversionDiagnosis, UnsupportedOp, _Captured,
                         _unconverted, diagnose_conversion)

__all__ = ["compare", "capture", "TFCompareResult", "diagnose_conversion", "ConversionDiagnosis",
           "ConversionAttempt", "UnsupportedOp"]


# --- the TensorFlow run --------------------------------------------------------------------------


def _flatten(obj: Any, key: str = "") -> Tuple[List[Tuple[str, Any]], List[str]]:
    """Tensors inside nested tuples, lists and dicts as (key, tensor), and the other leaves
    (key and type name; None and Python scalars are left out)."""
    if tf.is_tensor(obj) or isinstance(obj, np.ndarray):
        return [(key, obj)], []
    tensors: List[Tuple[str, Any]] = []
    other: List[str] = []
    items = (enumerate(obj) if isinstance(obj, (tuple, list))
             else obj.items() if isinstance(obj, dict) else ())
    for k, v in items:
        t, o = _flatten(v, f"{key}[{k!r}]" if isinstance(obj, dict) else f"{key}[{k}]")
        tensors += t
        other += o
    if not isinstance(obj, (tuple, list, dict)) and obj is not None and not isinstance(
            obj, (bool, int, float, str)):
        other.append(f"{key or 'output'}: {type(obj).__name__}")
    return tensors, other


def _numpy(t: Any) -> np.ndarray:
    return np.array(t.numpy() if hasattr(t, "numpy") else t, copy=True)


def _layers(model: Any) -> List[Any]:
    """Every layer inside ``model`` (nested ones too), the model itself left out."""
    flatten = getattr(model, "_flatten_layers", None)
    if flatten is not None:
        return [l for l in flatten(include_self=False, recursive=True)]
    return list(getattr(model, "submodules", ()))


def _run_recorded(model: Any, args: Any, notes: List[str]) -> Tuple[List[LayerCall], Any]:
    """Runs ``model(args, training=False)`` eagerly with every layer's ``call`` recorded;
    returns the calls in return order (children before parents; a call's ``path`` is the names
    of the layers it runs inside, joined by "/") and the model's output. The layers inside a
    recurrent layer (its cell, once per time step) are not recorded; ``notes`` says so."""
    calls: List[LayerCall] = []
    stack: List[str] = []
    counters: Dict[str, int] = defaultdict(int)
    starts = [0]
    keep: List[Any] = []  # the tensors whose id() the calls hold, alive to the end

    rnn = getattr(tf.keras.layers, "RNN", ())
    inside_rnn = [0]  # open calls of recurrent layers: their cells run once per time step
    recurrent: List[str] = []

    def recorded(layer: Any, original: Any):
        def call(*a, **k):
            if inside_rnn[0]:
                return original(*a, **k)
            is_rnn = isinstance(layer, rnn)
            if is_rnn and layer.name not in recurrent:
                recurrent.append(layer.name)
            inside_rnn[0] += is_rnn
            try:
                return record(layer, original, a, k)
            finally:
                inside_rnn[0] -= is_rnn
        return call

    def record(layer: Any, original: Any, a: Tuple[Any, ...], k: Dict[str, Any]) -> Any:
        tensors, _ = _flatten(list(a))
        keep.extend(t for _, t in tensors)
        inputs = [CallTensor(key, _numpy(t), id(t)) for key, t in tensors]
        stack.append(layer.name)
        path = "/".join(stack)
        start = starts[0]
        starts[0] += 1
        try:
            out = original(*a, **k)
        finally:
            stack.pop()
        tensors, other = _flatten(out)
        keep.extend(t for _, t in tensors)
        counters[path] += 1
        calls.append(LayerCall(path=path, class_name=type(layer).__name__,
                               call_index=counters[path], calls=0, order=len(calls),
                               start=start, inputs=inputs,
                               outputs=[CallTensor(key, _numpy(t), id(t))
                                        for key, t in tensors], skipped=other))
        return out

    patched = []
    try:
        for layer in _layers(model):
            own = "call" in vars(layer)
            patched.append((layer, own, vars(layer).get("call")))
            layer.call = recorded(layer, layer.call)
        out = model(args, training=False)
    finally:
        for layer, own, previous in patched:
            if own:
                layer.call = previous
            else:
                del layer.call
    for c in calls:
        c.calls = counters[c.path]
    if recurrent:
        notes.append(f"{', '.join(recurrent)}: recurrent, compared as a whole (its cell runs once "
                     f"per time step in TensorFlow; tf2onnx converts the recurrence into one op)")
    return calls, out


# --- the ONNX side -------------------------------------------------------------------------------


class _Graph:
    """The main graph of a tf2onnx model: producers, consumers, types, and the layer scopes in
    node and constant names ("<model>_1/<layer>_1/<Op>", tf2onnx keeping TensorFlow's names)."""

    def __init__(self, proto: onnx.ModelProto, layer_names: Set[str]):
        g = proto.graph
        self.nodes = list(g.node)
        self.outputs = [o.name for o in g.output]
        self.inputs = [i.name for i in g.input]
        self.initializers = {t.name for t in g.initializer}
        for n in self.nodes:
            if n.op_type == "Constant":
                self.initializers.update(n.output)
        self.producer = {t: i for i, n in enumerate(self.nodes) for t in n.output if t}
        self.consumers: Dict[str, List[int]] = defaultdict(list)
        for i, n in enumerate(self.nodes):
            for t in n.input:
                self.consumers[t].append(i)
        self.types = tensor_types(proto)
        self.names = layer_names
        self.suffix = self._suffix()

    def _candidates(self, comp: str) -> List[str]:
        base = re.sub(r"_\d+$", "", comp)
        return [n for n in (comp, base) if n in self.names]

    def _suffix(self) -> str:
        """The suffix tf2onnx's trace gave layer scopes ("_1" when every scope is "<layer>_1"),
        from the scopes that name one layer only."""
        seen: Counter = Counter()
        for n in self.nodes:
            for comp in n.name.split("/")[:-1]:
                cands = self._candidates(comp)
                if len(cands) == 1:
                    seen[comp[len(cands[0]):]] += 1
        return seen.most_common(1)[0][0] if seen else ""

    def chain(self, name: str, last_is_op: bool = True) -> Tuple[Tuple[str, ...], Tuple[str, ...]]:
        """The layer names and their scope components in a node or tensor name, outer first."""
        comps = name.split(":")[0].split("/")
        if last_is_op:
            comps = comps[:-1]
        names, scopes = [], []
        for comp in comps:
            cands = self._candidates(comp)
            if len(cands) > 1:
                cands = [c for c in cands if c + self.suffix == comp] or cands[:1]
            if cands:
                names.append(cands[0])
                scopes.append(comp)
        return tuple(names), tuple(scopes)

    def own_constants(self, i: int) -> List[str]:
        """The constants node ``i`` reads that no other node reads (their names keep the scope
        they came from; a constant shared by several nodes was merged and says nothing)."""
        return [t for t in self.nodes[i].input
                if t in self.initializers and len(set(self.consumers[t])) == 1]


# --- mapping -------------------------------------------------------------------------------------

_Key = Tuple[Tuple[str, ...], Tuple[str, ...]]  # (layer names, scope components)


def _fits(tf_shape: Tuple[int, ...], onnx_shape: Optional[Tuple[Any, ...]]) -> List[Tuple[int, ...]]:
    """The axis permutations p with onnx_shape == tf_shape[p] (identity first); symbolic
    dimensions fit anything; [] for another rank."""
    if onnx_shape is None or len(onnx_shape) != len(tf_shape) or len(tf_shape) > 6:
        return []
    out = []
    for p in itertools.permutations(range(len(tf_shape))):
        if all(not isinstance(d, int) or d == 0 or d == tf_shape[a] for d, a in zip(onnx_shape, p)):
            out.append(p)
    return out


def _inversions(p: Sequence[int]) -> int:
    return sum(1 for i in range(len(p)) for j in range(i + 1, len(p)) if p[i] > p[j])


class _Layouts:
    """One permutation per tensor rank from TensorFlow's layout to tf2onnx's (NHWC -> NCHW is
    (0, 3, 1, 2)): the Transposes tf2onnx put after the graph inputs (and before its outputs)
    say it; then the mapped tensors' shapes: among the tensors whose shape is not TensorFlow's,
    the permutation that fits most of them (ties: the one that moves fewest axes, so
    1x48x48x32 -> 1x32x48x48 is (0, 3, 1, 2), not (0, 3, 2, 1)). A tensor whose shape fits
    both identity and its rank's permutation (1x24x24x24) takes the permutation, unless a
    Transpose back to TensorFlow's layout produced it."""

    def __init__(self, pairs: Sequence[Tuple[Tuple[int, ...], Optional[Tuple[Any, ...]]]],
                 graph: Optional[_Graph] = None):
        votes: Dict[int, Counter] = defaultdict(Counter)
        for perm in (self._boundary_transposes(graph) if graph is not None else []):
            votes[len(perm)][perm] += len(pairs) + 1  # what tf2onnx did, whatever the shapes
        for tf_shape, onnx_shape in pairs:
            fits = _fits(tf_shape, onnx_shape)
            if fits and fits[0] != tuple(range(len(tf_shape))):
                for p in fits:
                    votes[len(tf_shape)][p] += 1
        self.perm = {r: max(c.items(), key=lambda kv: (kv[1], -_inversions(kv[0])))[0]
                     for r, c in votes.items()}
        self.graph = graph

    @staticmethod
    def _boundary_transposes(g: _Graph) -> List[Tuple[int, ...]]:
        """The permutations of the Transposes tf2onnx put after graph inputs (TensorFlow's
        layout -> its own) and, inverted, before graph outputs: shapes cannot tell them when
        the dimensions are equal (1x16x16x16)."""
        perms = []
        for n in g.nodes:
            perm = next((tuple(a.ints) for a in n.attribute if a.name == "perm"), None)
            if n.op_type != "Transpose" or not perm:
                continue
            if n.input and n.input[0] in g.inputs:
                perms.append(perm)
            elif n.output and n.output[0] in g.outputs:
                perms.append(tuple(perm.index(k) for k in range(len(perm))))
        return perms

    def choose(self, tf_shape: Tuple[int, ...], onnx_shape: Optional[Tuple[Any, ...]],
               tensor: str = "") -> Optional[Tuple[int, ...]]:
        """The permutation for one tensor (``tensor``: its ONNX name, when known): its rank's
        when it fits, else identity, else the one that fits with the fewest moves; None when
        none fits (another shape)."""
        identity = tuple(range(len(tf_shape)))
        if onnx_shape is None:
            return identity
        fits = _fits(tf_shape, onnx_shape)
        rank = self.perm.get(len(tf_shape))
        if rank is not None and rank in fits:
            if identity in fits and self._transposed_back(tensor, rank):
                return identity
            return rank
        return min(fits, key=_inversions) if fits else None

    def _transposed_back(self, tensor: str, rank: Tuple[int, ...]) -> bool:
        """Whether ``tensor`` is a Transpose's output undoing ``rank``'s permutation (tf2onnx
        going back to TensorFlow's layout), or a graph input or output (TensorFlow's layout)."""
        g = self.graph
        if g is None or not tensor:
            return False
        if tensor in g.outputs or tensor in g.inputs:
            return True
        i = g.producer.get(tensor)
        if i is None or g.nodes[i].op_type != "Transpose":
            return False
        perm = next((list(a.ints) for a in g.nodes[i].attribute if a.name == "perm"), None)
        return perm is not None and [rank[k] for k in perm] == list(range(len(rank)))

    def apply(self, value: np.ndarray, onnx_shape: Optional[Tuple[Any, ...]],
              tensor: str = "") -> Optional[np.ndarray]:
        """``value`` in the ONNX tensor's layout (see :meth:`choose`); None when no
        permutation fits."""
        p = self.choose(tuple(value.shape), onnx_shape, tensor)
        if p is None:
            return None
        return value if p == tuple(range(value.ndim)) else np.ascontiguousarray(value.transpose(p))

    def describe(self) -> str:
        names = {(0, 3, 1, 2): "NHWC -> NCHW ", (0, 2, 1): "NWC -> NCW ",
                 (0, 4, 1, 2, 3): "NDHWC -> NCDHW "}
        return "; ".join(f"rank {r}: {names.get(p, '')}perm {list(p)}"
                         for r, p in sorted(self.perm.items()))


class _Mapper:
    """Maps each layer call's outputs to ONNX tensors (see :func:`capture`)."""

    def __init__(self, graph: _Graph, calls: List[LayerCall]):
        self.g = graph
        self.calls = calls
        self.key_of: Dict[int, _Key] = {}  # call order -> its scope instance
        self.call_at: Dict[_Key, int] = {}  # its inverse (set by _instances)
        self.reasons: Dict[Tuple[int, str], str] = {}
        self.owner: Dict[int, int] = {}  # node -> owning call order
        self.mapped: Dict[Tuple[int, str], Tuple[str, List[int], str]] = {}
        self.fused_into: Dict[Tuple[int, str], str] = {}  # unmapped output -> the layer's label

    def run(self) -> None:
        self._instances()
        self._owners()
        nodes_of: Dict[int, List[int]] = defaultdict(list)
        for i, order in sorted(self.owner.items()):
            nodes_of[order].append(i)
        for c in self.calls:
            key = self.key_of.get(c.order)
            if key is None:
                continue
            mine = sorted(i for o, ns in nodes_of.items() for i in ns
                          if self._within(self.key_of.get(o), key))
            self._map_call(c, mine)

    @staticmethod
    def _within(key: Optional[_Key], outer: _Key) -> bool:
        return key is not None and key[0][:len(outer[0])] == outer[0] and \
            key[1][:len(outer[1])] == outer[1]

    def _instances(self) -> None:
        """Each call's scope instance: the k-th distinct scope of the layer (graph order) for
        its k-th call, when there are as many scopes as calls."""
        seen: Dict[Tuple[str, ...], List[Tuple[str, ...]]] = defaultdict(list)
        for n in self.g.nodes:
            names, scopes = self.g.chain(n.name)
            for j in range(len(names)):
                if scopes[:j + 1] not in seen[names[:j + 1]]:
                    seen[names[:j + 1]].append(scopes[:j + 1])
        for t in self.g.initializers:
            names, scopes = self.g.chain(t, last_is_op=True)
            for j in range(len(names)):
                if scopes[:j + 1] not in seen[names[:j + 1]]:
                    seen[names[:j + 1]].append(scopes[:j + 1])
        for c in self.calls:
            path = tuple(c.path.split("/"))
            insts = seen.get(path, [])
            if len(insts) == c.calls:
                self.key_of[c.order] = (path, insts[c.call_index - 1])
            elif insts:
                for o in c.outputs:
                    self.reasons[(c.order, o.key)] = (
                        f"called {c.calls} times but converted in {len(insts)} scopes")
            else:
                why = ("returns its input unchanged (an identity at inference): no ONNX nodes "
                       "of its own" if self._identity(c) else "no ONNX nodes in its scope "
                       "(folded into its neighbours or removed by tf2onnx's optimizer)")
                for o in c.outputs:
                    self.reasons[(c.order, o.key)] = why
        self.call_at = {k: order for order, k in self.key_of.items()}

    def _call_of(self, key: _Key) -> Optional[int]:
        """The call whose scope instance is the longest prefix of ``key``."""
        names, scopes = key
        for j in range(len(names), 0, -1):
            order = self.call_at.get((names[:j], scopes[:j]))
            if order is not None:
                return order
        return None

    def _owners(self) -> None:
        """A node belongs to the latest layer call (return order) whose scope names it or one of
        its own constants: tf2onnx names a fused node after one of the layers it fused (or after
        none, "Conv__235"), and its constants keep the scopes of the layers they come from."""
        for i, n in enumerate(self.g.nodes):
            if n.op_type == "Constant":
                continue
            owners = []
            named = self._call_of(self.g.chain(n.name))
            if named is not None:
                owners.append(named)
            for t in self.g.own_constants(i):
                o = self._call_of(self.g.chain(t))
                if o is not None:
                    owners.append(o)
            if owners:
                self.owner[i] = max(owners)

    def _leaving(self, nodes: List[int]) -> List[str]:
        inside = set(nodes)
        graph_outputs = set(self.g.outputs)
        out = []
        for i in nodes:
            for t in self.g.nodes[i].output:
                if t and (t in graph_outputs or any(j not in inside for j in self.g.consumers[t])):
                    out.append(t)
        return out

    def _map_call(self, c: LayerCall, nodes: List[int]) -> None:
        if not nodes:
            why, into = self._fused_into(c)
            why = why or ("returns its input unchanged (an identity at "
                                          "inference): no ONNX nodes of its own"
                                          if self._identity(c) else
                                          "no ONNX nodes in its scope (folded into constants or "
                                          "removed by tf2onnx's optimizer)")
            for o in c.outputs:
                self.reasons[(c.order, o.key)] = why
                if into is not None:
                    self.fused_into[(c.order, o.key)] = into
            return
        leaving = self._leaving(nodes)
        taken: Set[str] = set()
        for o in c.outputs:
            cands = []
            for t in leaving:
                dtype, shape = self.g.types.get(t, (None, None))
                if dtype is not None and dtype != o.value.dtype:
                    continue
                if shape is None or _fits(tuple(o.value.shape), shape):
                    cands.append(t)
            cands = [t for t in cands if t not in taken]
            if not cands:
                self.reasons[(c.order, o.key)] = (
                    f"no tensor of shape {shape_label(o.value.shape)} {o.value.dtype} (or a "
                    f"transpose of it) leaves its scope ({len(nodes)} nodes)")
                continue
            t = cands[-1]
            taken.add(t)
            others = self._fused_with(c, nodes)
            how = f"fused by tf2onnx with {', '.join(others)}" if others else ""
            self.mapped[(c.order, o.key)] = (t, nodes, how)

    def _fused_with(self, c: LayerCall, nodes: List[int]) -> List[str]:
        """The other layers whose scopes name the call's own nodes or their own constants (the
        layers tf2onnx fused into them), in call order."""
        key = self.key_of[c.order]
        others: Set[int] = set()
        for i in nodes:
            if self.owner.get(i) != c.order:
                continue
            for k in [self.g.chain(self.g.nodes[i].name)] + [self.g.chain(t)
                                                             for t in self.g.own_constants(i)]:
                o = self._call_of(k)
                if o is not None and o != c.order and not self._within(self.key_of[o], key):
                    others.add(o)
        by_order = {x.order: x for x in self.calls}
        return [by_order[o].path for o in sorted(others)]

    def _identity(self, c: LayerCall) -> bool:
        ids = {i.obj_id for i in c.inputs}
        return bool(c.outputs) and all(o.obj_id in ids or any(
            i.value.shape == o.value.shape and np.array_equal(i.value, o.value)
            for i in c.inputs) for o in c.outputs)

    def _fused_into(self, c: LayerCall) -> Tuple[str, Optional[str]]:
        """Why a call without nodes has none, and the layer it was fused into: a node of a
        later layer reads its constants (("", None) when none does)."""
        key = self.key_of.get(c.order)
        for i, n in enumerate(self.g.nodes):
            for t in self.g.own_constants(i):
                if key is not None and self._within(self.g.chain(t), key) and i in self.owner:
                    other = next(x for x in self.calls if x.order == self.owner[i])
                    return (f"fused by tf2onnx with {other.path} ({other.class_name}) into "
                            f"{n.name or n.op_type}: its own output is not in the ONNX graph",
                            other.label)
        return "", None


# --- capture -------------------------------------------------------------------------------------


def _load_model(model: Any) -> Any:
    if isinstance(model, (str, os.PathLike)):
        path = os.fspath(model)
        if not os.path.isfile(path):
            raise usage(f"model '{path}' is not a file")
        return tf.keras.models.load_model(path, compile=False)
    if not callable(model) or not hasattr(model, "layers"):
        raise usage(f"model must be a Keras model or a .keras file, not {type(model).__name__}")
    return model


def _input_values(model: Any, inputs: Any) -> Tuple[Any, List[Tuple[str, np.ndarray]]]:
    """The model's call argument (numpy, the structure given) and its inputs as (name, array),
    named after the Keras model's inputs where it has them."""
    if isinstance(inputs, dict):
        flat = [(str(k), np.asarray(v)) for k, v in inputs.items()]
        return {k: v for k, v in flat}, flat
    if isinstance(inputs, (list, tuple)):
        arrays = [np.asarray(v) for v in inputs]
        args: Any = list(arrays) if len(arrays) > 1 else arrays[0]
    else:
        arrays = [np.asarray(inputs)]
        args = arrays[0]
    names = [getattr(t, "name", "") for t in (getattr(model, "inputs", None) or [])]
    if len(names) != len(arrays) or len(set(names)) != len(names) or not all(names):
        names = ["input"] if len(arrays) == 1 else [f"input_{i}" for i in range(len(arrays))]
    return args, list(zip([n.split(":")[0] for n in names], arrays))


def _convert(model: Any, named: List[Tuple[str, np.ndarray]], opset: Optional[int],
             notes: List[str]) -> bytes:
    """tf2onnx's conversion in memory: from_keras, or from_function of the model's call when
    from_keras cannot convert it (subclassed models)."""
    spec = tuple(tf.TensorSpec(v.shape, tf.as_dtype(v.dtype), name=n) for n, v in named)
    captured = _Captured()
    logger = logging.getLogger("tf2onnx")
    logger.addHandler(captured)
    try:
        proto = _convert_logged(model, spec, opset, notes)
    finally:
        logger.removeHandler(captured)
    left = _unconverted(proto, opset_of(proto) or 0, captured.messages)
    if left:
        ops = ", ".join(dict.fromkeys(u.op_type for u in left))
        raise onnxdbg.Error(
            f"tf2onnx left {ops} unconverted at opset {opset_of(proto)} (node "
            f"{left[0].node}): the ONNX model cannot run; onnxdbg.tf.diagnose_conversion(model) "
            f"finds the opset that converts it")
    notes.append(f"converted now by tf2onnx {tf2onnx.__version__} at opset "
                 f"{opset_of(proto)}" + ("" if opset else " (its default)"))
    return proto.SerializeToString()


def _convert_logged(model: Any, spec: Tuple[Any, ...], opset: Optional[int],
                    notes: List[str]) -> onnx.ModelProto:
    try:
        proto, _ = tf2onnx.convert.from_keras(model, input_signature=spec, opset=opset)
    except Exception as first:  # noqa: BLE001 - from_function is the fallback
        try:
            fn = tf.function(lambda *a: model(list(a) if len(a) > 1 else a[0], training=False))
            proto, _ = tf2onnx.convert.from_function(fn, input_signature=spec, opset=opset)
            notes.append(f"converted with tf2onnx.convert.from_function (from_keras failed: "
                         f"{_first_line(first)})")
        except Exception as e:  # noqa: BLE001 - one sentence for the user
            raise onnxdbg.Error(
                f"tf2onnx could not convert {getattr(model, 'name', 'the model')} at opset "
                f"{opset or tf2onnx.constants.PREFERRED_OPSET}: {_first_line(e)}; "
                f"onnxdbg.tf.diagnose_conversion(model) tries other opsets and names the ops "
                f"it leaves unconverted") from e
    return proto


def _first_line(e: BaseException) -> str:
    return (str(e).strip().splitlines() or [type(e).__name__])[0][:300]


def _graph_inputs(graph: _Graph, named: List[Tuple[str, np.ndarray]],
                  layouts: Optional[_Layouts] = None) -> Dict[str, np.ndarray]:
    """Graph input -> the value it stands for: by name (":0" ignored), else in order; refused
    when the count, a rank or a dtype differs."""
    inits = graph.initializers
    ins = [i for i in graph.inputs if i not in inits]
    if len(ins) != len(named):
        raise usage(f"the ONNX model has {len(ins)} inputs ({', '.join(ins)}), the Keras model "
                    f"was given {len(named)}")
    by_name = {n: v for n, v in named}
    plain = [i.split(":")[0] for i in ins]
    values = ([by_name[p] for p in plain] if set(plain) == set(by_name)
              else [v for _, v in named])
    out = {}
    for name, v in zip(ins, values):
        dtype, shape = graph.types.get(name, (None, None))
        if dtype is not None and dtype != v.dtype:
            raise usage(f"ONNX input '{name}' is {dtype}, the Keras model's is {v.dtype}")
        if shape is not None and len(shape) != v.ndim:
            raise usage(f"ONNX input '{name}' has rank {len(shape)} ({shape_label(shape)}), "
                        f"the Keras model's {v.ndim} ({shape_label(v.shape)})")
        fitted = v
        identity = tuple(range(v.ndim))
        if shape is not None and identity not in _fits(v.shape, shape):
            fitted = (layouts or _Layouts([])).apply(v, shape, name)
            if fitted is None:
                raise usage(f"ONNX input '{name}' is {shape_label(shape)}, the Keras model's "
                            f"{shape_label(v.shape)}")
        out[name] = fitted
    return out


def capture(model: Any, inputs: Any, *, onnx_model: Optional[ModelSource] = None,
            opset: Optional[int] = None) -> Capture:
    """Runs the Keras ``model`` once on ``inputs`` with every layer call recorded, converts it
    with tf2onnx (unless ``onnx_model`` is given) and maps every layer call's output tensors to
    the ONNX tensors that stand for them.

    A call maps to the last tensor that leaves the nodes of its scope (tf2onnx keeps TensorFlow's
    names: "<model>_1/<layer>_1/<Op>", a nested layer under its parent's scope, the k-th call of
    a shared layer in its k-th scope) with its dtype and its shape or a permutation of it. A node
    belongs to the latest layer whose scope names it or one of the constants only it reads, so a
    Conv that tf2onnx fused with the next BatchNormalization ("Conv__235", reading both layers'
    weights) stands for the BatchNormalization, and the Conv is "not mapped: fused". Shapes that
    differ by a permutation (tf2onnx's NHWC -> NCHW) take the permutation of their rank that
    fits most tensors (once per rank, from the shapes), and the golden values are transposed to
    it; the capture's notes say which.

    A SavedModel folder has no Keras layers: its frozen serving graph (tf2onnx's
    ``tf_loader.from_saved_model``, what ``python -m tf2onnx.convert --saved-model`` converts)
    runs once in a TensorFlow session, and each layer name scope ("block_3_depthwise_1") is a row
    whose output is the last tensor leaving the scope; the rest is as above.

    Args:
        model: a Keras model (Keras 3 or tf.keras; functional, sequential or subclassed), a
            .keras/.h5 file, or a SavedModel folder. A Keras model runs eagerly with
            ``training=False``.
        inputs: its input: a numpy array, a list of arrays (several inputs, in order), or a dict
            name -> array; shapes as TensorFlow takes them (NHWC images).
        onnx_model: the conversion to check (path, bytes or onnx.ModelProto); None converts
            now, in memory, with tf2onnx at ``opset`` (None: tf2onnx's default).
        opset: the opset of that conversion.

    Returns:
        a :class:`onnxdbg._bridge.Capture` (the model bytes, graph inputs, calls, mapping rows,
        golden values in the ONNX layouts).

    Raises:
        onnxdbg.UsageError: ``model`` is no Keras model, a missing file; ``onnx_model`` is no
            model or its inputs do not match ``inputs`` (count, rank, dtype; named in the
            message).
        onnxdbg.Error: tf2onnx cannot convert the model, or leaves TensorFlow ops unconverted
            (its reason, and a pointer to :func:`diagnose_conversion`); a folder that is no
            SavedModel.
    """
    if isinstance(model, (str, os.PathLike)) and os.path.isdir(os.fspath(model)):
        return _capture_saved_model(os.fspath(model), inputs, onnx_model, opset)
    model = _load_model(model)
    args, named = _input_values(model, inputs)
    notes: List[str] = []
    if onnx_model is None:
        data = _convert(model, named, opset, notes)
    else:
        data = model_bytes(onnx_model)
    proto = onnx.load_from_string(data)
    graph = _Graph(proto, {l.name for l in _layers(model)})
    _graph_inputs(graph, named)  # refused here, before the TensorFlow run
    calls, out = _run_recorded(model, args, notes)
    tensors, _ = _flatten(out)
    return _mapped_capture(data, proto, graph, named, calls, [(k, _numpy(t)) for k, t in tensors],
                           notes, type(model).__name__, onnx_model is None)


def _mapped_capture(data: bytes, proto: onnx.ModelProto, graph: _Graph,
                    named: List[Tuple[str, np.ndarray]], calls: List[LayerCall],
                    out: List[Tuple[str, np.ndarray]], notes: List[str], model_class: str,
                    converted: bool) -> Capture:
    """The calls mapped onto the graph, the layouts found, the golden values: the capture."""
    mapper = _Mapper(graph, calls)
    mapper.run()
    pairs = [(tuple(o.value.shape), graph.types.get(mapper.mapped[(c.order, o.key)][0],
                                                    (None, None))[1])
             for c in calls for o in c.outputs if (c.order, o.key) in mapper.mapped]
    layouts = _Layouts(pairs, graph)
    rows, golden = _rows(calls, mapper, graph, layouts)
    outputs = _outputs(out, graph, golden, layouts, notes)
    moved = sum(1 for r in rows if r.mapped and "transposed" in r.reason)
    if moved:
        notes.append(f"layouts: {moved} layer outputs transposed into the ONNX model's layout "
                     f"({layouts.describe()})")
    return Capture(model=data, inputs=_graph_inputs(graph, named, layouts), calls=calls,
                   rows=rows, golden=golden, outputs=outputs, notes=notes,
                   model_class=model_class, opset=opset_of(proto),
                   node_count=len(graph.nodes), exporter="tf2onnx", exported=converted,
                   layout=layouts.apply)


# --- a SavedModel folder: its frozen graph, op by op -----------------------------------------


def _layer_scopes(graph_def: Any) -> Tuple[int, Dict[str, List[Any]]]:
    """The depth of the layers' scopes (one below the scopes every op shares:
    "StatefulPartitionedCall/<model>_1/") and the ops of each layer scope, graph order."""
    ops = [n for n in graph_def.node if n.op not in ("Const", "Placeholder", "NoOp")]
    comps = [n.name.split("/")[:-1] for n in ops]
    depth = 0
    while True:  # ops named at the top ("Identity" of an output) are no scope
        deeper = [c for c in comps if len(c) > depth + 1]
        if len(deeper) < len(comps) / 2 or len({c[depth] for c in deeper}) != 1:
            break
        depth += 1
    scopes: Dict[str, List[Any]] = defaultdict(list)
    for n, c in zip(ops, comps):
        if len(c) > depth:
            scopes[c[depth]].append(n)
    return depth, scopes


def _saved_model_calls(graph_def: Any, scopes: Mapping[str, List[Any]],
                       feeds: Dict[str, np.ndarray], out_names: Sequence[str]
                       ) -> Tuple[List[LayerCall], List[np.ndarray]]:
    """One call per layer scope (``_layer_scopes``) of the frozen graph and the graph's outputs
    ``out_names``, from one run in a TensorFlow session: a call's output is the last tensor that
    leaves its scope (read outside it, float), its inputs the tensors it reads from outside
    (constants left out)."""
    consumers: Dict[str, Set[str]] = defaultdict(set)  # op -> the ops reading its outputs
    const = {n.name for n in graph_def.node if n.op == "Const"}
    for n in graph_def.node:
        for t in n.input:
            if not t.startswith("^"):
                consumers[t.split(":")[0]].add(n.name)
    plan = []
    for scope, ops in scopes.items():
        names = {n.name for n in ops}
        leaving = [f"{n.name}:0" for n in ops if consumers[n.name] - names]
        reads = list(dict.fromkeys(t if ":" in t else f"{t}:0" for n in ops for t in n.input
                                   if not t.startswith("^") and t.split(":")[0] not in names
                                   and t.split(":")[0] not in const))
        if leaving:
            plan.append((scope, ops[-1].op, leaving[-1], reads))
    with tf.Graph().as_default() as g:
        tf.graph_util.import_graph_def(graph_def, name="")
        fetch = list(dict.fromkeys(t for _, _, out, reads in plan for t in [out] + reads))
        fetch = [t for t in fetch if g.get_tensor_by_name(t).dtype.is_floating]
        with tf.compat.v1.Session(graph=g) as sess:
            got = sess.run(fetch + list(out_names), feed_dict=feeds)
    values = dict(zip(fetch, got))
    calls = []
    for scope, op_type, out, reads in plan:
        if out not in values:
            continue
        calls.append(LayerCall(path=scope, class_name=op_type, call_index=1, calls=1,
                               order=len(calls), start=len(calls),
                               inputs=[CallTensor(t, values[t], k) for k, t in enumerate(reads)
                                       if t in values],
                               outputs=[CallTensor("", values[out], -1 - len(calls))]))
    return calls, got[len(fetch):]


def _capture_saved_model(path: str, inputs: Any, onnx_model: Optional[ModelSource],
                         opset: Optional[int]) -> Capture:
    """:func:`capture` of a SavedModel folder: tf2onnx's frozen graph of its serving signature
    (``tf2onnx.tf_loader.from_saved_model``, what ``python -m tf2onnx.convert --saved-model``
    converts), one row per layer scope, TensorFlow's values of the scope's last tensor."""
    from tf2onnx import tf_loader
    notes: List[str] = [f"{path}: a SavedModel has no Keras layers; its rows are the layer name "
                        f"scopes of its frozen serving graph, each with the last tensor leaving it"]
    try:
        graph_def, in_names, out_names = tf_loader.from_saved_model(path, None, None)
    except Exception as e:  # noqa: BLE001 - one sentence for the user
        raise onnxdbg.Error(f"could not load the SavedModel '{path}': {_first_line(e)}") from e
    arrays = (list(inputs.values()) if isinstance(inputs, dict)
              else list(inputs) if isinstance(inputs, (list, tuple)) else [inputs])
    if len(arrays) != len(in_names):
        raise usage(f"the SavedModel takes {len(in_names)} inputs ({', '.join(in_names)}), "
                    f"{len(arrays)} were given")
    named = [(n.split(":")[0], np.asarray(a)) for n, a in zip(in_names, arrays)]
    if onnx_model is None:
        try:
            proto, _ = tf2onnx.convert.from_graph_def(graph_def, input_names=in_names,
                                                      output_names=out_names, opset=opset)
        except Exception as e:  # noqa: BLE001 - one sentence for the user
            raise onnxdbg.Error(f"tf2onnx could not convert '{path}': {_first_line(e)}; "
                                f"onnxdbg.tf.diagnose_conversion('{path}') tries other "
                                f"opsets") from e
        notes.append(f"converted now by tf2onnx {tf2onnx.__version__} at opset "
                     f"{opset_of(proto)}" + ("" if opset else " (its default)"))
        data = proto.SerializeToString()
    else:
        data = model_bytes(onnx_model)
        proto = onnx.load_from_string(data)
    _, scopes = _layer_scopes(graph_def)
    graph = _Graph(proto, set(scopes))
    _graph_inputs(graph, named)  # refused here, before the TensorFlow run
    calls, outs = _saved_model_calls(graph_def, scopes,
                                     {n: a for n, (_, a) in zip(in_names, named)}, out_names)
    return _mapped_capture(data, proto, graph, named, calls,
                           [(f"[{k}]" if len(outs) > 1 else "", v) for k, v in enumerate(outs)],
                           notes, "SavedModel", onnx_model is None)


def _rows(calls: Sequence[LayerCall], mapper: _Mapper, graph: _Graph,
          layouts: _Layouts) -> Tuple[List[LayerRow], Dict[str, np.ndarray]]:
    """One row per tensor output of each call, and the golden values of the mapped tensors in
    the ONNX layout (an output whose tensor already holds another value stays unmapped)."""
    rows: List[LayerRow] = []
    golden: Dict[str, np.ndarray] = {}
    owner: Dict[str, str] = {}
    for c in calls:
        for o in c.outputs:
            k = (c.order, o.key)
            row = LayerRow(path=c.path, class_name=c.class_name, call_index=c.call_index,
                           calls=c.calls, output_key=o.key, onnx_nodes=[], onnx_tensor=None,
                           shape=tuple(o.value.shape), dtype=str(o.value.dtype), mapped=False,
                           reason=mapper.reasons.get(k, "not mapped"),
                           fused_into=mapper.fused_into.get(k))
            rows.append(row)
            if k not in mapper.mapped:
                continue
            t, nodes, how = mapper.mapped[k]
            shape = graph.types.get(t, (None, None))[1]
            value = layouts.apply(o.value, shape, t)
            if value is None:
                row.reason = f"'{t}' is {shape_label(shape or ())}, no transpose of the layer's"
                continue
            if t in golden:
                if not np.array_equal(golden[t], value, equal_nan=True):
                    row.reason = f"its ONNX tensor '{t}' is also {owner[t]}'s output"
                    continue
                how = how or f"the same tensor as {owner[t]}"
            golden.setdefault(t, value)
            owner.setdefault(t, row.label)
            row.mapped, row.onnx_tensor = True, t
            row.onnx_nodes = [graph.nodes[i].name for i in nodes]
            if t in graph.producer:
                row.onnx_node = graph.nodes[graph.producer[t]].name
            perm = layouts.choose(tuple(o.value.shape), shape, t)
            moved = perm is not None and perm != tuple(range(len(perm)))
            row.reason = "; ".join(x for x in (how, f"transposed {perm}" if moved else "") if x)
    return rows, golden


def _outputs(out: List[Tuple[str, np.ndarray]], graph: _Graph, golden: Dict[str, np.ndarray],
             layouts: _Layouts, notes: List[str]) -> List[OutputRow]:
    """The graph outputs with the model's output values (added to ``golden``)."""
    if len(out) != len(graph.outputs):
        notes.append(f"final outputs not compared: the model returns {len(out)} tensors, "
                     f"the graph has {len(graph.outputs)} outputs")
        return []
    rows = []
    for (key, v), name in zip(out, graph.outputs):
        fitted = layouts.apply(v, graph.types.get(name, (None, None))[1], name)
        rows.append(OutputRow(name=name, key=key, shape=tuple(v.shape), dtype=str(v.dtype)))
        if fitted is None:
            notes.append(f"graph output '{name}' has another shape than the model's output "
                         f"{key or ''} ({shape_label(v.shape)}); not compared")
            continue
        golden.setdefault(name, fitted)
    return rows


# --- comparing -----------------------------------------------------------------------------------


@dataclass(repr=False)
class TFCompareResult(BridgeResult):
    """A Keras model compared with its tf2onnx conversion, layer call by layer call (the bridge
    core's :class:`onnxdbg._bridge.BridgeResult` in Keras's words).

    Attributes (besides the core's):
        layers: one :class:`onnxdbg._bridge.LayerRow` per tensor output of each layer call, in
            the order the calls returned (a nested layer before the layer holding it); the same
            list as ``rows``. ``path`` is the layer's name ("outer/inner" when nested).
        first_divergent_layer: the first layer (execution order) whose own ONNX nodes, re-run
            alone on TensorFlow's inputs, are outside tolerance; None when none is.
    """

    UNIT: ClassVar[str] = "layer"
    FRAMEWORK: ClassVar[str] = "tensorflow"
    TITLE: ClassVar[str] = "onnxdbg.tf"
    MADE_BY: ClassVar[str] = "ONNX conversion"
    MADE_VERB: ClassVar[str] = "converted"
    EXPORTERS: ClassVar[Mapping[str, str]] = {"tf2onnx": "tf2onnx"}

    @property
    def layers(self) -> List[LayerRow]:
        """The layer rows (``rows``)."""
        return self.rows

    @property
    def first_divergent_layer(self) -> Optional[str]:
        """The first divergent layer's name (``first_divergent``)."""
        return self.first_divergent


def compare(model: Any, inputs: Any, *, onnx_model: Optional[ModelSource] = None,
            opset: Optional[int] = None, backend: str = "reference", atol: float = 1e-4,
            rtol: float = 1e-3, isolate: bool = True) -> TFCompareResult:
    """Compares a Keras model with its tf2onnx conversion layer by layer and names the first
    layer whose ONNX nodes compute something else.

    The model runs once in TensorFlow with every layer call recorded (see :func:`capture` for
    how calls map to ONNX tensors and layouts); the ONNX model runs on ``backend`` with the same
    inputs and every mapped tensor and final output is compared with TensorFlow's value
    (layerwise :func:`onnxdbg.compare` with those values as golden). With ``isolate``, each layer
    output outside tolerance is re-run alone (its ONNX nodes extracted, fed TensorFlow's values
    of their inputs, or the reference's where TensorFlow has none, which the row's note says):
    "own" when it still diverges, "inherited" when the error came from upstream.

    Args:
        model: a Keras model, a .keras/.h5 file or a SavedModel folder (see :func:`capture`).
        inputs: a numpy array, a list of arrays or a dict name -> array (TensorFlow's layout).
        onnx_model: the conversion to check (path, bytes, onnx.ModelProto); None: converted now
            in memory with tf2onnx at ``opset`` (the notes say so).
        opset: the conversion's opset (None: tf2onnx's default).
        backend: the onnxdbg backend that runs the ONNX model ("reference", "onnxruntime", with
            options as on the command line).
        atol, rtol: |onnx - tf| <= atol + rtol * |tf| element-wise (units of each tensor).
        isolate: re-run divergent layers alone (own vs inherited error); without it the first
            layer outside tolerance is the first divergent one.

    Returns:
        a :class:`TFCompareResult`; ``str()`` prints the tables and the verdict line.

    Raises:
        onnxdbg.UsageError: misuse (see :func:`capture`; a backend that is not a string,
            negative tolerances).
        onnxdbg.Error: tf2onnx cannot convert the model, or the ONNX model cannot be run.
    """
    check_compare_args(backend, atol, rtol)
    cap = capture(model, inputs, onnx_model=onnx_model, opset=opset)
    return compare_capture(cap, TFCompareResult, backend, atol, rtol, isolate=bool(isolate))
