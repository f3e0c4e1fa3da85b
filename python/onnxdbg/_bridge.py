"""onnxdbg._bridge: the framework-neutral core of the framework bridges (onnxdbg.torch,
onnxdbg.tf).

A bridge runs a framework model once, maps each layer (module) call's outputs to the ONNX tensors
that stand for them and hands those values to :func:`onnxdbg.compare` as golden values. The
adapter of each framework captures the values, exports or converts, and names things (a
:class:`Capture`); everything after that lives here, once: scoring the rows with the layerwise
report, re-running divergent layers' ONNX nodes alone on the framework's values (own vs inherited
error), and the result's table, JSON and viewer overlay (:class:`BridgeResult`).

Needs the onnx package (node names, shape inference); never imports a framework.
"""

from __future__ import annotations

import dataclasses
import math
import os
from dataclasses import dataclass, field
from typing import (Any, Callable, ClassVar, Dict, List, Mapping, Optional, Sequence, Set,
                    Tuple, Union)

import numpy as np
import onnx

import onnxdbg

ModelSource = Union[str, os.PathLike, bytes, "onnx.ModelProto"]

# ONNX TensorProto element type -> numpy dtype (the types a layer output can have).
ONNX_TO_NUMPY = {
    onnx.TensorProto.FLOAT: np.dtype(np.float32),
    onnx.TensorProto.DOUBLE: np.dtype(np.float64),
    onnx.TensorProto.FLOAT16: np.dtype(np.float16),
    onnx.TensorProto.INT8: np.dtype(np.int8),
    onnx.TensorProto.INT16: np.dtype(np.int16),
    onnx.TensorProto.INT32: np.dtype(np.int32),
    onnx.TensorProto.INT64: np.dtype(np.int64),
    onnx.TensorProto.UINT8: np.dtype(np.uint8),
    onnx.TensorProto.UINT16: np.dtype(np.uint16),
    onnx.TensorProto.UINT32: np.dtype(np.uint32),
    onnx.TensorProto.UINT64: np.dtype(np.uint64),
    onnx.TensorProto.BOOL: np.dtype(np.bool_),
}



def _onnx_dtype(dtype: np.dtype) -> int:
    """The TensorProto element type of a numpy dtype."""
    for elem, np_dtype in ONNX_TO_NUMPY.items():
        if np_dtype == dtype:
            return elem
    raise usage(f"no ONNX element type for numpy {dtype}")


# (numpy dtype or None, shape or None; a symbolic dimension is its name).
TensorType = Tuple[Optional[np.dtype], Optional[Tuple[Any, ...]]]


# --- what the framework computed -------------------------------------------------------------


@dataclass
class CallTensor:
    """One tensor a layer call took or returned.

    Attributes:
        key: where it sits in the call's arguments or output: "" for a lone tensor, "[0]",
            "[1]['mask']" for nested tuples, lists and dicts.
        value: its value when the call started (inputs) or returned (outputs), a copy, in the
            framework's layout.
        obj_id: an identity of the framework's tensor object, to follow a tensor from call to
            call (``id()`` of a torch.Tensor; a Keras tensor's position in the graph).
    """

    key: str
    value: np.ndarray
    obj_id: int


@dataclass
class LayerCall:
    """One call of one layer (Keras) or submodule (PyTorch) during the framework run, in the
    order the calls returned.

    Attributes:
        path: the layer's name (Keras) or dotted module path (PyTorch; "" is the root module).
        class_name: the layer's or module's class name.
        call_index: 1 for the first call, 2 for the second, ...; ``calls`` how many there were.
        order: position among all calls by return (post-order: children before parents).
        start: position among all calls by entry (pre-order).
        inputs, outputs: the tensors it took (positional arguments) and returned.
        skipped: outputs that are not tensors (key and type), which nothing compares.
    """

    path: str
    class_name: str
    call_index: int
    calls: int
    order: int
    start: int
    inputs: List[CallTensor]
    outputs: List[CallTensor]
    skipped: List[str] = field(default_factory=list)

    @property
    def label(self) -> str:
        """``path`` with ``#k`` when called more than once; "<root>" for ""."""
        name = self.path or "<root>"
        return f"{name}#{self.call_index}" if self.calls > 1 else name


# --- the result ---------------------------------------------------------------------------------


@dataclass
class LayerRow:
    """One output tensor of one layer (module) call, and how its ONNX counterpart compares.

    Attributes:
        path: the layer's name or dotted module path ("" for the root module).
        class_name: the layer's or module's class.
        call_index: which call (1-based); ``calls`` how many there were.
        output_key: which output of the call ("" for a lone tensor, "[0]", "['logits']").
        onnx_nodes: the ONNX nodes of the layer's scope (names, graph order; the producer only
            when the exporter fused the layer into its neighbour).
        onnx_tensor: the ONNX tensor mapped to this output, or None when not mapped.
        onnx_node: the node producing ``onnx_tensor`` (one of ``onnx_nodes``), or None.
        shape, dtype: the framework tensor's shape (its own layout) and numpy dtype name.
        mapped: whether an ONNX tensor stands for this output; if not, ``reason`` says why.
        reason: why it is not mapped, or a note on how it was mapped (fused, same tensor as...,
            transposed from the framework's layout).
        max_abs_error, max_rel_error: the backend's value against the framework's (absolute,
            in the tensor's units; relative |a - g| / |g|); None when not compared.
        own_error: max abs error of the layer's ONNX nodes re-run alone on the framework's
            values of their inputs (computed for rows outside tolerance only).
        source: "own" (the layer's own ONNX nodes diverge), "inherited" (they agree alone,
            the error comes from upstream) or None (within tolerance / not isolated).
        passed: within atol + rtol * |golden| element-wise; None when not compared.
        note: how the layer was isolated (inputs without a framework value) or why it could
            not be compared.
        fused_into: for an output that is not mapped because the exporter fused the layer into
            a later one (Conv + BatchNormalization into one Conv), that layer's label: its
            tensor, compared, includes this layer's computation. None otherwise.
    """

    path: str
    class_name: str
    call_index: int
    calls: int
    output_key: str
    onnx_nodes: List[str]
    onnx_tensor: Optional[str]
    shape: Tuple[int, ...]
    dtype: str
    mapped: bool
    reason: str = ""
    max_abs_error: Optional[float] = None
    max_rel_error: Optional[float] = None
    own_error: Optional[float] = None
    source: Optional[str] = None
    passed: Optional[bool] = None
    note: str = ""
    onnx_node: Optional[str] = None
    fused_into: Optional[str] = None

    @property
    def label(self) -> str:
        """The row's name in tables: ``path#k[key]`` ("<root>" for the root module)."""
        name = self.path or "<root>"
        if self.calls > 1:
            name += f"#{self.call_index}"
        return name + self.output_key


@dataclass
class OutputRow:
    """One graph output compared with the framework model's output.

    Attributes:
        name: the ONNX graph output; ``key`` where it sits in the framework's output.
        shape, dtype: the framework value's shape and numpy dtype name.
        max_abs_error, max_rel_error: against the framework's output (None: not compared).
        passed: within tolerance; None when the backend produced nothing to compare.
    """

    name: str
    key: str
    shape: Tuple[int, ...]
    dtype: str
    max_abs_error: Optional[float] = None
    max_rel_error: Optional[float] = None
    passed: Optional[bool] = None


# (framework value, ONNX shape or None) -> the value in the ONNX tensor's layout, or None when
# no layout the adapter knows fits.
Layout = Callable[[np.ndarray, Optional[Tuple[Any, ...]]], Optional[np.ndarray]]


@dataclass
class Capture:
    """A framework model's run mapped onto its ONNX model: everything the comparison needs.

    Attributes:
        model: the ONNX model (serialized bytes).
        inputs: graph input name -> the framework's value it stands for (numpy, ONNX layout).
        calls: the layer (module) calls, in the order they returned.
        rows: one row per tensor output of each call, in that order (mapping only: no errors).
        golden: ONNX tensor name -> the framework's value in the ONNX tensor's layout (the
            mapped layer outputs and the final outputs), the golden values for
            :func:`onnxdbg.compare`.
        outputs: the graph outputs with the framework's values.
        notes: what was skipped (non-tensor outputs, outputs the graph lacks, layouts changed),
            and how the model was exported or converted when that is not what was asked for.
        model_class, opset, node_count: the framework model's class, the ONNX model's ai.onnx
            opset and its number of nodes.
        exporter: what made the ONNX model ("dynamo", "torchscript", "tf2onnx"; None when
            unknown); ``exported`` whether it was made now (False: the model was given).
        layout: turns a framework value into an ONNX tensor's layout (isolation feeds a layer's
            own inputs through it); None: the layouts are the same.
    """

    model: bytes
    inputs: Dict[str, np.ndarray]
    calls: List[LayerCall]
    rows: List[LayerRow]
    golden: Dict[str, np.ndarray]
    outputs: List[OutputRow]
    notes: List[str]
    model_class: str = ""
    opset: Optional[int] = None
    node_count: int = 0
    exporter: Optional[str] = None
    exported: bool = False
    layout: Optional[Layout] = field(default=None, repr=False)


# --- small helpers ---------------------------------------------------------------------------


def usage(msg: str) -> Exception:
    """An :class:`onnxdbg.UsageError` with ``msg`` (misuse of a bridge's arguments)."""
    return onnxdbg.UsageError(msg)


def finite(v: Any) -> Optional[float]:
    """A report's error value as a float (the JSON's "inf"/"infinity" strings as math.inf);
    None when absent or not a number."""
    if v is None:
        return None
    try:
        return float(v)
    except (TypeError, ValueError):
        return math.inf if str(v).lower() in ("inf", "infinity") else None


def json_num(v: Optional[float]) -> Optional[float]:
    """``v`` when finite, else None (JSON has no inf or NaN)."""
    return v if v is not None and math.isfinite(v) else None


def errors(actual: np.ndarray, golden: np.ndarray, atol: float,
           rtol: float) -> Tuple[float, float, bool]:
    """Max abs error, max rel error |a - g| / |g| and whether |a - g| <= atol + rtol |g|
    element-wise (NaN == NaN) of two arrays of one shape, compared in float64; (inf, inf,
    False) when the shapes differ."""
    a = np.asarray(actual).astype(np.float64)
    g = np.asarray(golden).astype(np.float64)
    if a.shape != g.shape:
        return math.inf, math.inf, False
    if a.size == 0:
        return 0.0, 0.0, True
    both_nan = np.isnan(a) & np.isnan(g)
    with np.errstate(invalid="ignore", divide="ignore"):
        diff = np.where(both_nan, 0.0, np.abs(a - g))
        diff = np.where(np.isnan(diff), np.inf, diff)
        rel = np.where(diff == 0, 0.0, diff / np.abs(g))
    ok = bool(np.all(diff <= atol + rtol * np.abs(np.where(both_nan, 0.0, g))))
    return float(diff.max()), float(rel.max()), ok


def fmt(v: Optional[float]) -> str:
    """An error for a table: 3 significant digits, "-" for None."""
    if v is None:
        return "-"
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf"
    return f"{v:.3g}"


def table(headers: Sequence[str], rows: Sequence[Sequence[str]],
          right: Sequence[int] = ()) -> List[str]:
    """Aligned columns as the CLI prints them: header, a rule of dashes, rows; the columns in
    ``right`` right-aligned."""
    width = [len(h) for h in headers]
    for r in rows:
        for i, c in enumerate(r):
            width[i] = max(width[i], len(c))

    def line(cells: Sequence[str]) -> str:
        out = []
        for i, c in enumerate(cells):
            pad = width[i] - len(c)
            if i in right:
                out.append(" " * pad + c)
            else:
                out.append(c + (" " * pad if i + 1 < len(cells) else ""))
        return "  ".join(out).rstrip()

    return [line(headers), line(["-" * w for w in width])] + [line(r) for r in rows]


def nodes_label(nodes: Sequence[str]) -> str:
    """Node names for a sentence: all of up to two, else first ... last (count)."""
    if not nodes:
        return "-"
    if len(nodes) <= 2:
        return ", ".join(nodes)
    return f"{nodes[0]} ... {nodes[-1]} ({len(nodes)} nodes)"


def shape_label(shape: Sequence[Any]) -> str:
    """``1x3x8x8``; "scalar" for ()."""
    return "x".join(str(d) for d in shape) if shape else "scalar"


def shape_matches(onnx_shape: Optional[Tuple[Any, ...]], shape: Tuple[int, ...]) -> bool:
    """Whether a concrete shape fits an ONNX shape (symbolic and 0 dimensions fit anything)."""
    if onnx_shape is None or len(onnx_shape) != len(shape):
        return False
    return all(not isinstance(d, int) or d == s or d == 0 for d, s in zip(onnx_shape, shape))


def model_bytes(model: ModelSource) -> bytes:
    """The serialized model of a path (external data resolved beside the file), bytes or an
    onnx.ModelProto.

    Raises:
        onnxdbg.UsageError: a path that is not a file, or another type.
    """
    if isinstance(model, (bytes, bytearray)):
        return bytes(model)
    if isinstance(model, onnx.ModelProto):
        return model.SerializeToString()
    if isinstance(model, (str, os.PathLike)):
        path = os.fspath(model)
        if not os.path.isfile(path):
            raise usage(f"onnx_model '{path}' is not a file")
        return onnx.load(path).SerializeToString()
    raise usage(f"onnx_model must be a path, bytes or onnx.ModelProto, not "
                f"{type(model).__name__}")


def tensor_types(model: onnx.ModelProto) -> Dict[str, TensorType]:
    """Tensor name -> (numpy dtype or None, shape or None; a symbolic dim is its name) from
    the model's value_info and ONNX shape inference (main graph)."""
    types: Dict[str, TensorType] = {}
    try:
        inferred = onnx.shape_inference.infer_shapes(model)
    except Exception:  # noqa: BLE001 - shapes are a help for matching, not a requirement
        inferred = model
    for vi in (list(inferred.graph.value_info) + list(inferred.graph.output)
               + list(inferred.graph.input)):
        if not vi.type.HasField("tensor_type"):
            continue
        tt = vi.type.tensor_type
        shape = None
        if tt.HasField("shape"):
            shape = tuple(d.dim_value if d.HasField("dim_value") else (d.dim_param or "?")
                          for d in tt.shape.dim)
        types[vi.name] = (ONNX_TO_NUMPY.get(tt.elem_type), shape)
    return types


def opset_of(proto: onnx.ModelProto) -> Optional[int]:
    """The model's ai.onnx opset (None when it imports none)."""
    version = None
    for imp in proto.opset_import:
        if imp.domain in ("", "ai.onnx"):
            version = imp.version
    return version


def check_compare_args(backend: Any, atol: Any, rtol: Any) -> None:
    """Checks a bridge's ``compare`` arguments: one backend name, tolerances >= 0.

    Raises:
        onnxdbg.UsageError: naming the argument.
    """
    if not isinstance(backend, str) or not backend:
        raise usage("backend must be one backend name (a string), e.g. 'reference'")
    for name, v in (("atol", atol), ("rtol", rtol)):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not v >= 0:
            raise usage(f"{name} must be a number >= 0, not {v!r}")


# --- the comparison ------------------------------------------------------------------------------


@dataclass
class BridgeResult:
    """A framework model compared with its ONNX model, layer call by layer call. The adapters'
    result classes (``onnxdbg.torch.TorchCompareResult``, ``onnxdbg.tf.TFCompareResult``) name
    the rows in their framework's words (modules, layers).

    Attributes:
        backend: the backend that ran the ONNX model.
        atol, rtol: the tolerances (|a - g| <= atol + rtol * |g| element-wise).
        rows: one :class:`LayerRow` per tensor output of each call, in the order the calls
            returned (children before their parents).
        outputs: the final outputs (:class:`OutputRow`).
        first_divergent: name (path) of the first layer (execution order) whose own ONNX nodes,
            re-run alone on the framework's inputs, are outside tolerance; None when none is.
        first_divergent_nodes: that layer's ONNX node names.
        notes: what was skipped or approximated, and how the model was made.
        report: the :func:`onnxdbg.compare` result's JSON (``run --json``'s object).
        model: the ONNX model compared (bytes).
        model_class, opset, node_count, exporter, exported: see :class:`Capture`.
        error: why the backend could not run the ONNX model (the stage and its error, as
            ``onnxdbg run`` says it); None when it ran.
    """

    # The framework's words, set by each adapter's subclass.
    UNIT: ClassVar[str] = "layer"  # "module" for PyTorch
    FRAMEWORK: ClassVar[str] = "framework"  # the "against" of the final outputs' comparisons
    TITLE: ClassVar[str] = "onnxdbg"  # the header's first word
    MADE_BY: ClassVar[str] = "ONNX model"  # "ONNX export", "ONNX conversion"
    MADE_VERB: ClassVar[str] = "exported"  # "converted"
    EXPORTERS: ClassVar[Mapping[str, str]] = {}  # exporter -> its name in the header

    backend: str
    atol: float
    rtol: float
    rows: List[LayerRow]
    outputs: List[OutputRow]
    first_divergent: Optional[str]
    first_divergent_nodes: List[str]
    notes: List[str]
    report: Dict[str, Any]
    model: bytes = field(repr=False)
    model_class: str = ""
    opset: Optional[int] = None
    node_count: int = 0
    exporter: Optional[str] = None
    exported: bool = False
    error: Optional[str] = None
    _first: Optional[LayerRow] = field(default=None, repr=False)

    @property
    def agree(self) -> bool:
        """Every compared layer output and final output is within tolerance (False when the
        backend could not run the model: see ``error``)."""
        rows = [r.passed for r in self.rows if r.passed is not None]
        rows += [o.passed for o in self.outputs if o.passed is not None]
        return all(rows) and bool(rows) and self.error is None

    @property
    def verdict(self) -> str:
        """"agree", "disagree", or "error" (the backend could not run the ONNX model)."""
        if self.error is not None:
            return "error"
        return "agree" if self.agree else "disagree"

    def verdict_line(self) -> str:
        """One sentence: the verdict, and the first divergent layer with its ONNX nodes (or why
        the backend could not run the model)."""
        if self.error is not None:
            return f"verdict: error: {self.error}"
        unit = self.UNIT
        mapped = sum(r.mapped for r in self.rows)
        tol = f"atol {self.atol:g}, rtol {self.rtol:g}"
        compared = [r for r in self.rows if r.passed is not None]
        compared += [o for o in self.outputs if o.passed is not None]
        if not compared:
            return (f"verdict: disagree: nothing was compared (no {unit} output and no final "
                    f"output maps to an ONNX tensor the backend produced)")
        if self.agree:
            return (f"verdict: agree: {mapped} of {len(self.rows)} {unit} outputs mapped to "
                    f"ONNX tensors{self._fused_words()} and every one, and every final output, "
                    f"is within {tol} on {self.backend}")
        if self._first is not None:
            r = self._first
            own = fmt(r.own_error) if r.own_error is not None else "-"
            return (f"verdict: disagree: first divergent {unit}: {r.label} ({r.class_name}), "
                    f"ONNX nodes {nodes_label(self.first_divergent_nodes)}; alone on the "
                    f"framework's inputs its error is {own}, outside {tol} on {self.backend}")
        failing = [r for r in self.rows if r.passed is False]
        if failing:
            return (f"verdict: disagree: {len(failing)} {unit} outputs outside {tol} on "
                    f"{self.backend}, but none on its own (the difference is in code no mapped "
                    f"{unit} covers); first outside tolerance: {failing[0].label}")
        return (f"verdict: disagree: the final outputs differ beyond {tol} on {self.backend}; "
                f"no mapped {unit} output does")

    def _fused_words(self) -> str:
        fused = sum(r.fused_into is not None for r in self.rows)
        return f" ({fused} more fused into them by the exporter)" if fused else ""

    def _made(self) -> str:
        made = self.EXPORTERS.get(self.exporter or "", "exporter unknown")
        if self.exported:
            the = "the " if made.endswith("exporter") else ""
            return f"{self.MADE_VERB} now by {the}{made}"
        return f"given, {made}" if self.exporter else "given"

    def __str__(self) -> str:
        unit = self.UNIT
        mapped = sum(r.mapped for r in self.rows)
        lines = [f"{self.TITLE}: {self.model_class or unit} against its {self.MADE_BY} "
                 f"({self._made()}, {self.node_count} nodes, opset {self.opset}) on "
                 f"{self.backend}, atol {self.atol:g} rtol {self.rtol:g}",
                 f"{len(self.rows)} {unit} outputs, {mapped} mapped to ONNX tensors"
                 f"{self._fused_words()}", ""]
        rows = []
        for r in self.rows:
            if not r.mapped:
                result = "not mapped: " + r.reason
            elif r.passed is None:
                result = "not compared" + (f": {r.note}" if r.note else "")
            else:
                result = "pass" if r.passed else "FAIL"
            nodes = "-" if not r.onnx_nodes else (
                (r.onnx_node or r.onnx_nodes[-1])
                + (f" (+{len(r.onnx_nodes) - 1})" if len(r.onnx_nodes) > 1 else ""))
            rows.append([r.label, r.class_name, nodes, shape_label(r.shape),
                         fmt(r.max_abs_error), fmt(r.max_rel_error), fmt(r.own_error),
                         r.source or "-", result])
        lines += table([unit, "class", "ONNX nodes", "shape", "max abs err", "max rel err",
                        "own err", "error is", "result"], rows, right=(4, 5, 6))
        if self.outputs:
            lines.append("")
            out_rows = [[o.name, o.key or "-", shape_label(o.shape), fmt(o.max_abs_error),
                         fmt(o.max_rel_error),
                         "-" if o.passed is None else ("pass" if o.passed else "FAIL")]
                        for o in self.outputs]
            lines += table(["output", f"{unit} output", "shape", "max abs err", "max rel err",
                            "result"], out_rows, right=(3, 4))
        for r in self.rows:
            if r.note and r.passed is not None:
                lines.append(f"  note: {r.label}: {r.note}")
        for n in self.notes:
            lines.append(f"  note: {n}")
        lines += ["", self.verdict_line()]
        return "\n".join(lines)

    def __repr__(self) -> str:
        first = f" first={self.first_divergent!r}" if self.first_divergent else ""
        return f"<{type(self).__module__}.{type(self).__name__} {self.verdict}{first}>"

    def to_json(self) -> Dict[str, Any]:
        """The result as a JSON-ready dict: backend, atol, rtol, opset, exporter, exported,
        "<unit>s" (each row's fields plus "label"), outputs, "first_divergent_<unit>",
        first_divergent_nodes, agree, verdict, verdict_line, notes, and "report"
        (:func:`onnxdbg.compare`'s JSON). Non-finite errors are null, as in ``run --json``."""
        def clean(d: Dict[str, Any]) -> Dict[str, Any]:
            out = {}
            for k, v in d.items():
                if isinstance(v, float) and not math.isfinite(v):
                    v = None
                elif isinstance(v, tuple):
                    v = list(v)
                out[k] = v
            return out

        rows = []
        for r in self.rows:
            d = clean(dataclasses.asdict(r))
            d["label"] = r.label
            rows.append(d)
        return {
            "backend": self.backend,
            "atol": self.atol,
            "rtol": self.rtol,
            "opset": self.opset,
            "exporter": self.exporter,
            "exported": self.exported,
            f"{self.UNIT}s": rows,
            "outputs": [clean(dataclasses.asdict(o)) for o in self.outputs],
            f"first_divergent_{self.UNIT}": self.first_divergent,
            "first_divergent_nodes": list(self.first_divergent_nodes),
            "agree": self.agree,
            "verdict": self.verdict,
            "verdict_line": self.verdict_line(),
            "error": self.error,
            "notes": list(self.notes),
            "report": self.report,
        }

    def overlay(self) -> Dict[str, Any]:
        """The viewer's report object (``onnxdbg run --json``'s shape) with the layer errors:
        one "layerwise" row per ONNX node, carrying the error of the innermost mapped layer
        whose scope holds it (its label and class in "note"), "comparisons" for the final
        outputs, "first_divergent_node" the first divergent layer's producing node."""
        proto = onnx.load_from_string(self.model)
        index = {n.name: i for i, n in enumerate(proto.graph.node) if n.name}
        producer = {t: i for i, n in enumerate(proto.graph.node) for t in n.output}
        # Innermost layer per node: the mapped row with the fewest nodes that holds it.
        best: Dict[str, LayerRow] = {}
        for r in self.rows:
            if not r.mapped or r.passed is None:
                continue
            for n in r.onnx_nodes:
                cur = best.get(n)
                if cur is None or len(r.onnx_nodes) < len(cur.onnx_nodes):
                    best[n] = r
        rows = []
        for n, r in sorted(best.items(), key=lambda kv: index.get(kv[0], -1)):
            node = proto.graph.node[index[n]] if n in index else None
            rows.append({
                "tensor": r.onnx_tensor, "node": n, "node_index": index.get(n, -1),
                "op_type": node.op_type if node is not None else "", "backend": self.backend,
                "observed": True,
                "note": f"{self.UNIT} {r.label} ({r.class_name})" + (
                    f": {r.reason}" if r.reason else ""),
                "atol": self.atol, "rtol": self.rtol,
                "max_abs_error": json_num(r.max_abs_error),
                "max_rel_error": json_num(r.max_rel_error),
                "own_error": json_num(r.own_error), "error_source": r.source,
                "pass": bool(r.passed), self.UNIT: r.path, f"{self.UNIT}_class": r.class_name,
            })
        comparisons = [{
            "output": o.name, "backend": self.backend, "against": self.FRAMEWORK,
            "shape": list(o.shape), "atol": self.atol, "rtol": self.rtol,
            "max_abs_error": json_num(o.max_abs_error),
            "max_rel_error": json_num(o.max_rel_error),
            "pass": bool(o.passed) if o.passed is not None else False, "reason": "",
        } for o in self.outputs]
        first = None
        if self._first is not None and self._first.onnx_tensor is not None:
            t = self._first.onnx_tensor
            p = producer.get(t)
            node = proto.graph.node[p] if p is not None else None
            first = {"node": node.name if node is not None else "",
                     "node_index": p if p is not None else -1,
                     "op_type": node.op_type if node is not None else "",
                     "backend": self.backend, "tensor": t,
                     "own_error": json_num(self._first.own_error), "basis": self.UNIT,
                     self.UNIT: self._first.path, "precision": None, "repro": None}
        return {"verdict": self.verdict, "verdict_line": self.verdict_line(),
                "error_stat": "elemwise", "layerwise": rows, "comparisons": comparisons,
                "first_divergent_node": first}

    def to_html(self, path: Union[str, os.PathLike]) -> None:
        """Writes the viewer page of the ONNX model (one self-contained HTML file at ``path``)
        with every node painted with its layer's error (see :meth:`overlay`).

        Raises:
            onnxdbg.Error: this build of onnxdbg has no viewer.
        """
        writer = getattr(onnxdbg, "_write_html_overlay", None)
        if writer is None:
            raise onnxdbg.Error("this build of onnxdbg has no HTML viewer")
        writer(self.model, self.overlay(), path)


@dataclass
class _Plan:
    """How to re-run one row alone: its node indices (graph order), the values of the tensors
    they read from outside, and a note on values that are not the framework's."""

    row: LayerRow
    nodes: List[int]
    feeds: Dict[str, np.ndarray]
    note: str


class _Isolator:
    """Re-runs a layer's ONNX nodes alone on the framework's values of their inputs."""

    def __init__(self, cap: Capture, backend: str, atol: float, rtol: float):
        self.cap = cap
        self.backend = backend
        self.atol = atol
        self.rtol = rtol
        self.proto = onnx.load_from_string(cap.model)
        g = self.proto.graph
        self.index = {n.name: i for i, n in enumerate(g.node) if n.name}
        self.initializers = {t.name for t in g.initializer}
        self.constants = {t for n in g.node if n.op_type == "Constant" for t in n.output}
        self.calls = {(c.path, c.call_index): c for c in cap.calls}
        self._reference: Optional[Dict[str, np.ndarray]] = None
        self._types: Optional[Dict[str, TensorType]] = None

    def reference(self) -> Dict[str, np.ndarray]:
        if self._reference is None:
            self._reference = onnxdbg.run(self.cap.model, self.cap.inputs, backend="reference",
                                          intermediates=True)
        return self._reference

    def plan(self, r: LayerRow) -> Union[_Plan, str]:
        """Row ``r``'s ONNX nodes, the tensors they read from outside and the framework's value
        of each (the reference's where the framework has none); why not, as a string."""
        g = self.proto.graph
        nodes = sorted(self.index[n] for n in r.onnx_nodes if n in self.index)
        if not nodes or r.onnx_tensor is None:
            return "not isolated: its ONNX nodes have no names"
        produced = {t for i in nodes for t in g.node[i].output}
        boundary: List[str] = []
        for i in nodes:
            for t in g.node[i].input:
                if (t and t not in produced and t not in self.initializers
                        and t not in self.constants and t not in boundary):
                    boundary.append(t)
        call = self.calls.get((r.path, r.call_index))
        feeds: Dict[str, np.ndarray] = {}
        from_reference: List[str] = []
        for t in boundary:
            if t in self.cap.golden:
                feeds[t] = self.cap.golden[t]
            elif t in self.cap.inputs:
                feeds[t] = self.cap.inputs[t]
            else:
                value = self._call_input(call, t)
                if value is None:
                    value = self.reference().get(t)
                    from_reference.append(t)
                if value is None:
                    return f"not isolated: no value for its input '{t}'"
                feeds[t] = value
        note = ""
        if from_reference:
            note = ("isolated on the reference's values of " + ", ".join(from_reference)
                    + " (no framework value)")
        return _Plan(r, nodes, feeds, note)

    def own_error(self, r: LayerRow) -> Tuple[Optional[float], Optional[bool], str]:
        """(own max abs error, own pass, note) of row ``r`` re-run alone (its nodes extracted
        into a model of their own); (None, None, why) when it cannot be isolated."""
        plan = self.plan(r)
        if isinstance(plan, str):
            return None, None, plan
        try:
            sub = onnxdbg.extract(self.cap.model, inputs=list(plan.feeds),
                                  outputs=[r.onnx_tensor])
            out = onnxdbg.run(sub, plan.feeds, backend=self.backend)
        except onnxdbg.Error as e:
            return None, None, f"not isolated: {e}"
        return self._score(plan, out.get(r.onnx_tensor))

    def _score(self, plan: _Plan, got: Optional[np.ndarray]
               ) -> Tuple[Optional[float], Optional[bool], str]:
        if got is None:
            return None, None, "not isolated: the subgraph did not return the tensor"
        r = plan.row
        err, _, ok = errors(got, self.cap.golden[r.onnx_tensor], self.atol, self.rtol)
        return err, ok, plan.note

    def own_errors(self, rows: Sequence[LayerRow]
                   ) -> List[Tuple[Optional[float], Optional[bool], str]]:
        """:meth:`own_error` of every row, in as few runs as the rows allow: rows whose node
        sets do not overlap run together in one model, each reading its own copies of its
        boundary tensors (so no row sees another's output); a row whose nodes hold subgraphs
        (If/Loop bodies may read outer tensors by name), or a batch that fails, runs alone."""
        results: List[Optional[Tuple[Optional[float], Optional[bool], str]]] = [None] * len(rows)
        batches: List[Tuple[Set[int], List[Tuple[int, _Plan]]]] = []
        for k, r in enumerate(rows):
            plan = self.plan(r)
            if isinstance(plan, str):
                results[k] = (None, None, plan)
                continue
            g = self.proto.graph
            if any(a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS)
                   for i in plan.nodes for a in g.node[i].attribute):
                results[k] = self.own_error(r)
                continue
            nodes = set(plan.nodes)
            batch = next((b for b in batches if not b[0] & nodes), None)
            if batch is None:
                batches.append((set(), []))
                batch = batches[-1]
            batch[0].update(nodes)
            batch[1].append((k, plan))
        for _, plans in batches:
            try:
                model, feeds = self._batch_model([p for _, p in plans])
                out = onnxdbg.run(model, feeds, backend=self.backend)
            except onnxdbg.Error:
                for k, p in plans:
                    results[k] = self.own_error(p.row)
                continue
            for k, p in plans:
                results[k] = self._score(p, out.get(p.row.onnx_tensor))
        return [r if r is not None else (None, None, "not isolated") for r in results]

    def _batch_model(self, plans: Sequence[_Plan]) -> Tuple[bytes, Dict[str, np.ndarray]]:
        """One model holding every plan's nodes, plan j's boundary tensor T read from its own
        graph input "T::isolated<j>", every plan's tensor as a graph output, and what the nodes
        read of the model's data: its initializers and Constant nodes (as extract keeps them)."""
        g = self.proto.graph
        nodes, inputs, feeds, outputs = [], [], {}, []
        for j, p in enumerate(plans):
            renamed = {t: f"{t}::isolated{j}" for t in p.feeds}
            for t, v in p.feeds.items():
                feeds[renamed[t]] = v
                inputs.append(onnx.helper.make_tensor_value_info(
                    renamed[t], _onnx_dtype(v.dtype), v.shape))
            for i in p.nodes:
                n = onnx.NodeProto()
                n.CopyFrom(g.node[i])
                n.input[:] = [renamed.get(t, t) for t in n.input]
                nodes.append(n)
            want = self.cap.golden[p.row.onnx_tensor]
            if p.row.onnx_tensor not in {o.name for o in outputs}:
                outputs.append(onnx.helper.make_tensor_value_info(
                    p.row.onnx_tensor, _onnx_dtype(want.dtype), None))
        read = {t for n in nodes for t in n.input}
        constants = [n for n in g.node if n.op_type == "Constant" and set(n.output) & read]
        graph = onnx.helper.make_graph(constants + nodes, "isolated", inputs, outputs,
                                       initializer=[t for t in g.initializer if t.name in read])
        model = onnx.helper.make_model(graph, opset_imports=list(self.proto.opset_import),
                                       ir_version=self.proto.ir_version)
        model.functions.extend(self.proto.functions)
        return model.SerializeToString(), feeds

    def _call_input(self, call: Optional[LayerCall], tensor: str) -> Optional[np.ndarray]:
        """The call's own input with the ONNX tensor's type, in its layout (when exactly one
        value fits)."""
        if call is None:
            return None
        if self._types is None:
            self._types = tensor_types(self.proto)
        dtype, shape = self._types.get(tensor, (None, None))
        values = [i.value for i in call.inputs]
        if self.cap.layout is not None:
            values = [v for v in (self.cap.layout(v, shape) for v in values) if v is not None]
        fits = [v for v in values
                if (dtype is None or v.dtype == dtype)
                and (shape is None or shape_matches(shape, v.shape))]
        if not fits or any(not np.array_equal(f, fits[0]) for f in fits[1:]):
            return None
        if shape is None and len(call.inputs) != 1:
            return None
        return fits[0]


# ONNX tensor or graph output name -> the report's comparison of it on one backend.
_Entries = Dict[str, Mapping[str, Any]]


def _backend_entries(report: Mapping[str, Any], backend: str) -> Tuple[_Entries, _Entries]:
    """The report's comparisons on ``backend`` (named with or without its options), over all
    samples: the layerwise ones by ONNX tensor and the final ones by graph output."""
    backend_name = backend.split(":", 1)[0]

    def ours(row: Mapping[str, Any]) -> bool:
        b = str(row.get("backend", ""))
        return b in (backend, backend_name) or b.split(":", 1)[0] == backend_name

    samples = report["samples"] if "samples" in report else [report]
    layer = {e["tensor"]: e for s in samples for e in s.get("layerwise", []) if ours(e)}
    finals = {e["output"]: e for s in samples for e in s.get("comparisons", []) if ours(e)}
    return layer, finals


def _scored_rows(rows: Sequence[LayerRow], layer: _Entries, finals: _Entries,
                 backend: str) -> List[LayerRow]:
    """Copies of the capture's rows with the errors of their mapped ONNX tensors on
    ``backend`` (or a note where the backend did not observe them)."""
    scored = [dataclasses.replace(r) for r in rows]
    for r in scored:
        if not r.mapped:
            continue
        e = layer.get(r.onnx_tensor) or finals.get(r.onnx_tensor)
        if e is None:
            r.note = f"not observed on {backend}"
            continue
        if "observed" in e and not e["observed"]:
            r.note = e.get("note") or f"not observed on {backend}"
            continue
        r.max_abs_error = finite(e.get("max_abs_error"))
        r.max_rel_error = finite(e.get("max_rel_error"))
        r.passed = bool(e.get("pass"))
        if r.max_abs_error is None and not r.passed:
            r.max_abs_error = math.inf
    return scored


def _scored_outputs(outputs: Sequence[OutputRow], layer: _Entries,
                    finals: _Entries) -> List[OutputRow]:
    """Copies of the capture's graph outputs with their errors (where compared)."""
    scored = [dataclasses.replace(o) for o in outputs]
    for o in scored:
        e = finals.get(o.name) or layer.get(o.name)
        if e is None:
            continue
        o.max_abs_error = finite(e.get("max_abs_error"))
        o.max_rel_error = finite(e.get("max_rel_error"))
        o.passed = bool(e.get("pass"))
    return scored


def _isolate_failures(cap: Capture, rows: Sequence[LayerRow], backend: str, atol: float,
                      rtol: float, isolate: bool) -> Optional[LayerRow]:
    """Re-runs the ONNX nodes of every row outside tolerance alone (once per tensor and node
    set) and sets its own error, note and source; returns the first row whose error is its
    own (None when there is none). Without ``isolate``, the first row outside tolerance."""
    if not isolate:
        return next((r for r in rows if r.passed is False), None)
    iso = _Isolator(cap, backend, atol, rtol)
    keys: Dict[str, int] = {}  # one isolation per tensor and node set
    todo: List[LayerRow] = []
    for r in rows:
        if r.passed is False:
            key = f"{r.onnx_tensor}|{','.join(r.onnx_nodes)}"
            if key not in keys:
                keys[key] = len(todo)
                todo.append(r)
    own = iso.own_errors(todo)
    first: Optional[LayerRow] = None
    for r in rows:
        if r.passed is not False:
            continue
        err, ok, note = own[keys[f"{r.onnx_tensor}|{','.join(r.onnx_nodes)}"]]
        r.own_error = err
        if note:
            r.note = note
        if ok is not None:
            r.source = "inherited" if ok else "own"
        if r.source == "own" and first is None:
            first = r
    return first


def compare_capture(cap: Capture, result_class: type, backend: str, atol: float, rtol: float,
                    isolate: bool = True) -> BridgeResult:
    """Runs ``cap.model`` on ``backend`` with the framework's inputs, compares every mapped
    tensor and final output with the framework's value (layerwise :func:`onnxdbg.compare` with
    ``cap.golden`` as golden values), re-runs each divergent row's ONNX nodes alone when
    ``isolate`` and returns ``result_class`` (a :class:`BridgeResult` subclass) built from it.

    Raises:
        onnxdbg.Error: the ONNX model cannot be loaded or run.
    """
    res = onnxdbg.compare(cap.model, backends=(backend,), inputs=cap.inputs, golden=cap.golden,
                          atol=float(atol), rtol=float(rtol), layerwise=True)
    report = res.to_json()
    layer, finals = _backend_entries(report, backend)
    rows = _scored_rows(cap.rows, layer, finals, backend)
    outputs = _scored_outputs(cap.outputs, layer, finals)
    first = _isolate_failures(cap, rows, backend, float(atol), float(rtol), isolate)
    failed = [b for b in report.get("backends", []) if b.get("status") == "failed"]
    error = None
    if failed:
        b = failed[0]
        error = (f"{b.get('name', backend)} could not run the ONNX model "
                 f"({b.get('failed_stage', 'run')}): {b.get('error', '')}")
    return result_class(
        backend=backend, atol=float(atol), rtol=float(rtol), rows=rows, outputs=outputs,
        first_divergent=first.path if first is not None else None,
        first_divergent_nodes=list(first.onnx_nodes) if first is not None else [],
        notes=list(cap.notes), report=report, model=cap.model, model_class=cap.model_class,
        opset=cap.opset, node_count=cap.node_count, exporter=cap.exporter,
        exported=cap.exported, error=error, _first=first)
