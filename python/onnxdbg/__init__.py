"""onnxdbg: debug ONNX models from Python.

The same engine as the ``onnxdbg`` command line (a C++ library; this package is a thin front-end
over its public API, include/onnxdbg/): load and inspect a model, lint it, run it on a backend,
compare backends with each other or with golden values (layerwise, to find the first node that
diverges), reduce a failing model to a minimal failing one, extract subgraphs, diff two models
and draw them as an interactive HTML page. ``onnxdbg.torch.compare`` compares an ONNX export
with the PyTorch module it came from, module by module.

Arrays are numpy arrays: they go in without a copy when C-contiguous (the library reads the
array's own buffer) and come out owning their buffer. Long calls release the GIL; Ctrl-C stops
them at their next safe point (no worker process or temporary file is left) and raises
KeyboardInterrupt. Errors are :class:`Error` subclasses carrying the CLI's one sentence.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import sys
import tempfile
import warnings
import weakref
import zipfile
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Optional, Sequence, Union

import numpy as np

# A wheel carries the worker process that runs ONNX Runtime and OpenCV in onnxdbg/bin; a build
# tree's extension finds the worker of its build folder by itself.
_WORKER = os.path.join(os.path.dirname(__file__), "bin", "onnxdbg-worker")
if os.path.isfile(_WORKER) and not os.environ.get("ONNXDBG_WORKER"):
    os.environ["ONNXDBG_WORKER"] = _WORKER

# TensorFlow loads its libraries with RTLD_GLOBAL, so their protobuf (another version) would take
# the place of the one onnxdbg's extension links, and crash it, when TensorFlow comes first:
# RTLD_DEEPBIND makes the extension and its libraries look up their own symbols first.
_dlopen_flags = sys.getdlopenflags()
sys.setdlopenflags(_dlopen_flags | getattr(os, "RTLD_DEEPBIND", 0))
try:
    from . import _core  # noqa: E402
finally:
    sys.setdlopenflags(_dlopen_flags)
from ._core import (  # noqa: E402,F401
    BackendError,
    CancelledError,
    Error,
    ModelError,
    NotFoundError,
    UnsupportedError,
    UsageError,
)

__version__ = _core.version()

__all__ = [
    "Error", "ModelError", "UsageError", "NotFoundError", "UnsupportedError", "BackendError",
    "CancelledError", "OnnxdbgWarning", "Model", "ValueInfo", "Node", "load", "run", "compare",
    "CompareResult", "lint", "LintResult", "inspect", "InspectResult", "diff", "DiffResult",
    "reduce", "ReducedModel", "extract", "view", "save_npy", "save_npz", "bisect_optimizers",
    "BisectResult", "option_schema", "batch", "BatchResult",
]

ModelLike = Union[str, os.PathLike, bytes, "Model", Any]  # Any: onnx.ModelProto


def _schema_default(row: dict):
    """An options.def row's default as a Python keyword's: its python_default where the two
    front-ends differ on purpose, else the CLI's default in Python's type ("" is None)."""
    text = row["python_default"] or row["default"]
    if text == "None" or text == "":
        return None
    if text == "()":
        return ()
    if row["type"] == "bool":
        return text == "true"
    if row["type"] == "double":
        return float(text)
    if row["type"] in ("int", "uint64_t") and row["unit"] != "bytes":
        return int(text)
    if row["id"] == "backends":
        return tuple(text.split(","))
    return text


# Every shared option's default, by its options.def id (include/onnxdbg/options.def: the one
# declaration the CLI and this package read; tests/python/test_options.py checks the keywords).
_D = {row["id"]: _schema_default(row) for row in _core.option_schema()}


def option_schema() -> list:
    """The options the CLI and this package share (include/onnxdbg/options.def), one dict each:
    group, id, type, cli (the flag), python (the keyword; "" when Python has none), default (as
    the CLI writes it), python_default (Python's own where it differs), polygraphy (the flag of
    the same meaning), unit and help."""
    return _core.option_schema()


TensorDict = Mapping[str, np.ndarray]


class OnnxdbgWarning(UserWarning):
    """A warning the library gave beside its result (a backend that fell back to another
    execution provider, an option a backend ignored, a model newer than the ONNX it knows)."""


# --- models ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ValueInfo:
    """A graph input or output: its name, numpy dtype (``object`` for strings, None when the
    model does not say, or for a narrow type such as int4 when ml_dtypes is not installed), and
    shape (ints; str for a symbolic dimension such as ``"batch"``;
    None for an unnamed dynamic one), or None when the model declares no shape."""

    name: str
    dtype: Optional[np.dtype]
    shape: Optional[tuple]
    type: str = ""


@dataclass(frozen=True)
class Node:
    """A node of the main graph (ONNX IR "Nodes"), with its metadata_props."""

    name: str
    op_type: str
    domain: str
    inputs: tuple
    outputs: tuple
    metadata: dict = field(default_factory=dict)


# ONNX's narrow element types under ml_dtypes' names (onnxdbg's dtype names): numpy knows them
# once ml_dtypes is imported; arrays of them go in and come out as ml_dtypes arrays.
_NARROW_DTYPES = frozenset({
    "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu",
    "float4_e2m1fn", "float6_e2m3fn", "float6_e3m2fn", "int4", "uint4", "int2", "uint2",
})


def _numpy_dtype(name: str) -> Optional[np.dtype]:
    if name in ("undefined", ""):
        return None
    if name == "string":
        return np.dtype(object)
    if name == "bfloat16":
        return np.dtype(np.float32)  # numpy has none; values come out as float32
    if name in _NARROW_DTYPES:
        try:
            import ml_dtypes  # noqa: F401  (registers the names with numpy)
        except ImportError:
            return None  # ValueInfo.type still names it
    try:
        return np.dtype(name)
    except TypeError:
        return None


class Model:
    """An ONNX model onnxdbg can work on, made by :func:`load`.

    A model loaded from a file stays that file (its external data is read from beside it); one
    given as bytes or as an ``onnx.ModelProto`` is written once to a private temporary folder,
    removed when the Model is garbage-collected or Python exits.
    """

    def __init__(self, path: Union[str, os.PathLike], *, _owned_dir: Optional[str] = None):
        self._path = os.fspath(path)
        if _owned_dir is not None:
            self._finalizer = weakref.finalize(self, shutil.rmtree, _owned_dir, True)
        info = _core.model_info(self._path)
        self.inputs = [_value_info(v) for v in info["inputs"]]
        self.outputs = [_value_info(v) for v in info["outputs"]]
        self.nodes = [
            Node(n["name"], n["op_type"], n["domain"], tuple(n["inputs"]), tuple(n["outputs"]),
                 dict(n["metadata"]))
            for n in info["nodes"]
        ]
        self.opsets: dict[str, int] = dict(info["opsets"])
        self.ir_version: int = info["ir_version"]
        self.producer: str = info["producer"]
        _warn(("warning", w) for w in info["warnings"])

    @property
    def path(self) -> str:
        """The model file the library reads (a temporary copy for models given as bytes)."""
        return self._path

    def to_bytes(self) -> bytes:
        """The serialized ModelProto (external data stays in its files)."""
        with open(self._path, "rb") as f:
            return f.read()

    def save(self, path: Union[str, os.PathLike]) -> None:
        """Writes the model to ``path`` atomically (a temporary file beside it, then renamed).
        External data files are not copied."""
        path = os.fspath(path)
        d = os.path.dirname(os.path.abspath(path))
        fd, tmp = tempfile.mkstemp(prefix=".onnxdbg-", dir=d)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(self.to_bytes())
            os.replace(tmp, path)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise

    def __repr__(self) -> str:
        ins = ", ".join(f"{v.name}: {_shape_str(v.shape)}" for v in self.inputs)
        return f"<onnxdbg.Model {os.path.basename(self._path)!r}: {len(self.nodes)} nodes, " \
               f"inputs ({ins}), opsets {self.opsets}>"


def _value_info(d: dict) -> ValueInfo:
    return ValueInfo(d["name"], _numpy_dtype(d["dtype"]),
                     None if d["shape"] is None else tuple(d["shape"]), d["type"])


def _shape_str(shape: Optional[tuple]) -> str:
    if shape is None:
        return "?"
    return "x".join("?" if s is None else str(s) for s in shape) or "scalar"


def load(model: ModelLike) -> Model:
    """Loads a model: a path (external data beside it), the serialized bytes, an
    ``onnx.ModelProto`` or a :class:`Model` (returned as is).

    Raises NotFoundError for a missing file, ModelError for bytes that are no ONNX model.
    """
    if isinstance(model, Model):
        return model
    if isinstance(model, (str, os.PathLike)):
        return Model(model)
    if isinstance(model, (bytes, bytearray, memoryview)):
        data = bytes(model)
    elif hasattr(model, "SerializeToString"):
        data = model.SerializeToString()
    else:
        raise TypeError(f"onnxdbg.load: expected a path, bytes, onnx.ModelProto or Model, "
                        f"got {type(model).__name__}")
    d = tempfile.mkdtemp(prefix="onnxdbg-py-")
    try:
        path = os.path.join(d, "model.onnx")
        with open(path, "wb") as f:
            f.write(data)
        return Model(path, _owned_dir=d)
    except BaseException:
        shutil.rmtree(d, True)
        raise


# --- shared argument handling ---------------------------------------------------------------------


class _Progress:
    """The CLI's progress line on stderr ("[onnxdbg] ..." redrawn in place) when stderr is a
    terminal; a callable given by the caller gets every line instead."""

    def __init__(self, progress: Union[bool, Callable[[str], None], None]):
        self._fn = progress if callable(progress) else None
        self._tty = bool(progress) and self._fn is None and _isatty(sys.stderr)
        self._drawn = False

    def callback(self) -> Optional[Callable[[str], None]]:
        if self._fn is not None:
            return self._fn
        return self._draw if self._tty else None

    def _draw(self, text: str) -> None:
        sys.stderr.write(f"\r\033[K[onnxdbg] {text}...")
        sys.stderr.flush()
        self._drawn = True

    def clear(self) -> None:
        if self._drawn:
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()
            self._drawn = False


def _isatty(stream) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def _call(progress, fn, *args):
    p = _Progress(progress)
    try:
        return fn(*args, p.callback())
    finally:
        p.clear()


def _warn(messages: Iterable) -> None:
    for kind, text in messages:
        if kind == "warning":
            warnings.warn(text, OnnxdbgWarning, stacklevel=3)


def _backend_list(backends: Union[str, Sequence[str]]) -> str:
    if isinstance(backends, str):
        return backends
    return ",".join(backends)


def _backend_spec(backend: str, options: Mapping[str, Any]) -> str:
    parts = [backend] + [f"{k}={v}" for k, v in options.items()]
    return ":".join(parts)


def _tolerance(value: Union[float, Mapping[str, float]]) -> list:
    """--atol/--rtol values: "1e-5" for a float, "NAME:V" per output of a dict ("" or "*": default)."""
    if isinstance(value, Mapping):
        out = []
        for k, v in value.items():
            out.append(repr(float(v)) if k in ("", "*", None) else f"{k}:{float(v)!r}")
        return out
    return [repr(float(value))]


def _shapes(input_shapes: Optional[Mapping[str, Sequence[int]]]) -> list:
    if not input_shapes:
        return []
    return [f"{k}:[{','.join(str(int(d)) for d in v)}]" for k, v in input_shapes.items()]


def _ranges(val_range) -> list:
    if val_range is None:
        return []
    if isinstance(val_range, Mapping):
        return [f"{k}:[{float(lo)!r},{float(hi)!r}]" for k, (lo, hi) in val_range.items()]
    lo, hi = val_range
    return [f"[{float(lo)!r},{float(hi)!r}]"]


def _memory(budget: Union[int, str]) -> int:
    if isinstance(budget, str):
        return _core.parse_memory_size(budget)
    return int(budget)


def _samples(data) -> tuple:
    """(list of dicts, path): a dict is one sample, a list several, a str/PathLike a file."""
    if data is None:
        return [], ""
    if isinstance(data, (str, os.PathLike)):
        return [], os.fspath(data)
    if isinstance(data, Mapping):
        return [dict(data)], ""
    return [dict(d) for d in data], ""


def _path_or_empty(p) -> str:
    return "" if p is None else os.fspath(p)


def _input_keywords(inputs, iterations: Optional[int], seed: int,
                    input_shapes: Optional[Mapping[str, Sequence[int]]], val_range) -> dict:
    """The inputs group (given arrays or a data file, else generated) as the binding's
    keywords."""
    in_list, in_path = _samples(inputs)
    return dict(samples=in_list, inputs=in_path, iterations=iterations, seed=int(seed),
                input_shapes=_shapes(input_shapes), val_range=_ranges(val_range))


def _comparison_keywords(golden, atol, rtol, error_stat: str, golden_names: str,
                         golden_layout: str) -> dict:
    """The comparison group (golden arrays or a file and how they fit the model, tolerances,
    statistic) as the binding's keywords."""
    golden_list, golden_path = _samples(golden)
    return dict(golden_samples=golden_list, golden=golden_path, atol=_tolerance(atol),
                rtol=_tolerance(rtol), error_stat=error_stat, golden_names=golden_names,
                golden_layout=golden_layout)


def _limits(timeout: Optional[float], max_memory: Union[int, str, None],
            max_iterations: Optional[int]) -> dict:
    """The limits group (--timeout, --max-memory, --max-iterations) as the binding's keywords:
    seconds, bytes and a count, 0 for none."""
    return dict(timeout=float(timeout or 0),
                max_memory=0 if max_memory is None else _memory(max_memory),
                max_iterations=int(max_iterations or 0))


# --- run ------------------------------------------------------------------------------------------


def run(model: ModelLike, inputs: Optional[TensorDict] = None, *, backend: str = "reference",
        options: Optional[Mapping[str, Any]] = None, intermediates: bool = False, seed: int = 1,
        input_shapes: Optional[Mapping[str, Sequence[int]]] = None, val_range=None,
        memory_budget: Union[int, str] = "2GiB", progress=True) -> dict:
    """Runs ``model`` once on ``backend`` and returns its outputs by name.

    Args:
        model: a path, bytes, onnx.ModelProto or Model (see :func:`load`).
        inputs: every graph input without an initializer, name -> array of its declared dtype
            and static dims. None: generated as ``onnxdbg run`` generates sample 0 (uniform
            values in ``val_range``, default [0, 1], seeded by ``seed``; dynamic dims from
            ``input_shapes`` or 1).
        backend: ``"reference"`` (onnxdbg's interpreter), ``"onnxruntime"``, ``"opencv"``; may
            carry options as on the command line (``"onnxruntime:opt=disabled"``).
        options: more backend options (``{"threads": 1}``), as ``--backends NAME:KEY=VALUE``.
        intermediates: also return every tensor a main-graph node produces (not those inside
            If/Loop bodies): the reference's from its run; another backend's as extra graph
            outputs of one run (their dtypes from a reference run).
        memory_budget: bytes (or "2GiB") the intermediate tensors may take; more raises.
        progress: True: a progress line on a terminal's stderr; a callable gets the lines.

    Returns:
        dict name -> numpy array (graph outputs, then the intermediates with
        ``intermediates=True``), in the model's dtypes and shapes.

    Raises:
        UsageError (bad inputs or options), NotFoundError (unknown backend, missing file),
        ModelError, UnsupportedError (an op the reference lacks), BackendError (the backend
        refused, failed or crashed: it runs in a worker process, so Python survives).
    """
    m = load(model)
    spec = _backend_spec(backend, options or {})
    r = _call(progress, _core.run_backend, m.path, spec,
              None if inputs is None else dict(inputs), int(seed), _shapes(input_shapes),
              _ranges(val_range), bool(intermediates), _memory(memory_budget))
    _warn(r["messages"])
    out = dict(r["outputs"])
    out.update(r["intermediates"])
    return out


# --- compare --------------------------------------------------------------------------------------


class CompareResult:
    """What :func:`compare` found: the rendering of ``onnxdbg run`` in Python.

    ``str(result)`` prints the CLI's tables and verdict line; ``to_json()`` is the object
    ``onnxdbg run --json`` prints; ``to_html(path)`` writes the viewer page painted with the
    errors (``onnxdbg run --html``).
    """

    def __init__(self, core_result, model: Model):
        self._r = core_result
        self._model = model  # keeps a model given as bytes (its temporary file) alive
        self._json: Optional[dict] = None
        self.messages: list = core_result.messages()

    @property
    def verdict(self) -> str:
        """"agree", "disagree" or "error" (a backend failed)."""
        return self._r.verdict()

    @property
    def agree(self) -> bool:
        return self.verdict == "agree"

    def to_json(self) -> dict:
        """The object ``onnxdbg run --json`` prints (README "run --json")."""
        if self._json is None:
            self._json = json.loads(self._r.json())
        return self._json

    def _samples(self) -> list:
        j = self.to_json()
        return j["samples"] if "samples" in j else [j]

    @property
    def comparisons(self) -> list:
        """Per output and backend (of every sample): output, backend, max_abs_error,
        max_rel_error, pass, ... (the ``comparisons`` of ``run --json``)."""
        out = []
        for s in self._samples():
            out.extend(s.get("comparisons", []))
        return out

    @property
    def layerwise(self) -> list:
        """Per intermediate tensor and backend (with ``layerwise=True``): tensor, node,
        op_type, backend, observed, max_abs_error, max_rel_error, own_error, error_source,
        pass. Empty without the layerwise pass."""
        out = []
        for s in self._samples():
            out.extend(s.get("layerwise", []))
        return out

    @property
    def first_divergent_node(self) -> Optional[dict]:
        """The node where the divergence starts (node, op_type, backend, tensor, own_error,
        basis), or None."""
        return self.to_json().get("first_divergent_node")

    def to_html(self, path: Union[str, os.PathLike]) -> None:
        """Writes the viewer page (one self-contained HTML file) painted with this result."""
        self._r.write_html(os.fspath(path))

    def __str__(self) -> str:
        return self._r.text(False)

    def __repr__(self) -> str:
        return f"<onnxdbg.CompareResult {self.verdict}>"


def compare(model: ModelLike, *, backends: Union[str, Sequence[str]] = _D["backends"],
            inputs=_D["load_inputs"], golden=_D["load_outputs"],
            golden_names: str = _D["golden_names"], golden_layout: str = _D["golden_layout"],
            atol: Union[float, Mapping[str, float]] = _D["atol"],
            rtol: Union[float, Mapping[str, float]] = _D["rtol"],
            layerwise: bool = _D["layerwise"], isolate: bool = _D["isolate"],
            iterations: Optional[int] = _D["iterations"], sample: Optional[int] = _D["sample"],
            seed: int = _D["seed"],
            input_shapes: Optional[Mapping[str, Sequence[int]]] = _D["input_shapes"],
            val_range=_D["val_range"], error_stat: str = _D["error_stat"],
            validate: bool = _D["validate"],
            memory_budget: Union[int, str] = _D["layerwise_memory"],
            save_repro=_D["save_repro"],
            reference_accumulate: Optional[str] = _D["reference_accumulate"],
            strict_providers: bool = _D["strict_providers"], save_inputs=_D["save_inputs"],
            save_outputs=_D["save_outputs"], timeout: Optional[float] = _D["timeout"],
            max_memory: Union[int, str, None] = _D["max_memory"],
            max_iterations: Optional[int] = _D["max_iterations"],
            progress=True) -> CompareResult:
    """Runs ``model`` on several backends with the same inputs and compares their outputs
    (``onnxdbg run``): with the first backend's, or with ``golden`` values.

    Args:
        backends: names with options, as ``--backends`` (``"onnxruntime:opt=disabled"``).
        inputs: one sample (dict name -> array), several (a list of dicts), or a data file
            (.npz, Polygraphy JSON, ONNX test-data folder); None: ``iterations`` generated
            samples (seed, seed+1, ...; ``input_shapes``/``val_range`` as :func:`run`).
        golden: golden values (a dict, a list of dicts per sample, or a file): graph outputs,
            and with ``layerwise=True`` any intermediate tensor by ONNX tensor name; every
            backend (the reference too) is then compared with them.
        golden_names: how ``golden``'s keys name the model's tensors (``--golden-names``):
            "exact" (ONNX tensor names; TensorFlow's "NAME:0" and "NAME" match each other) or
            "suffix" (also a key that ends exactly one tensor's name at a "/", a scope numbered
            by the converter included: "block_3/depthwise:0" is
            "model_1/block_3_1/depthwise:0"; a key ending several names raises UsageError).
        golden_layout: the axis order of ``golden``'s tensors (``--golden-layout``): "as-is",
            "auto" (a tensor whose shape is the model's with its axes permuted is transposed,
            by the permutation that fits the most tensors of its rank) or "nhwc" (channels-last:
            tensors of rank 3 to 5 transposed to channels-first where the model's shape says
            so). What was renamed and transposed is in the result's notes and in
            ``to_json()["golden_mapping"]``.
        atol, rtol: tolerances (a float, or a dict output name -> value), |a - g| <= atol +
            rtol * |g| element-wise (``error_stat`` "max", "mean", "median" compare that
            statistic instead).
        layerwise: compare every intermediate tensor and name the first divergent node.
        isolate: re-run each divergent node alone on golden inputs (own vs inherited error).
        memory_budget: bytes of intermediate tensors held at once.
        save_repro: folder for the first divergent node as an ONNX test case (None: none).
        save_inputs, save_outputs: files (.npz / .json) to write the inputs and outputs to.
        timeout: seconds each backend's load and run may take (``--timeout``); a backend past it
            is a failed row, "timed out after N s" (None: the backends' own limits).
        max_memory: bytes (or a size such as ``"4GB"``) one tensor may take (``--max-memory``):
            a larger generated input is an error, a larger initializer or intermediate tensor of
            the reference a failed row (None: 80% of the memory available, less where
            ``ulimit -v`` or the cgroup's memory limit leaves less).
        max_iterations: iterations one Loop or Scan node of the reference may run
            (``--max-iterations``); one that reaches it is a failed row (None: no bound).

    Raises:
        UsageError for contradictory options or data that does not fit the model, NotFoundError,
        ModelError. A backend that fails or crashes is a failed row (``verdict == "error"``).
    """
    m = load(model)
    options = dict(
        backends=_backend_list(backends), sample=sample,
        **_input_keywords(inputs, iterations, seed, input_shapes, val_range),
        **_comparison_keywords(golden, atol, rtol, error_stat, golden_names, golden_layout),
        validate=bool(validate), layerwise=bool(layerwise or isolate), isolate=bool(isolate),
        memory_budget=_memory(memory_budget),
        save_repro="-" if save_repro is None else os.fspath(save_repro),
        reference_accumulate=reference_accumulate or "", strict_providers=bool(strict_providers),
        save_inputs=_path_or_empty(save_inputs), save_outputs=_path_or_empty(save_outputs),
        **_limits(timeout, max_memory, max_iterations))
    r = _call(progress, _core.compare, m.path, options)
    result = CompareResult(r, m)
    _warn(result.messages)
    return result


# --- lint, inspect, diff ----------------------------------------------------------------------


class _RenderedResult:
    """A result of the library with the CLI's text (``str``) and JSON (``to_json``)."""

    def __init__(self, core_result):
        self._r = core_result
        self._json: Optional[dict] = None
        self.messages: list = core_result.messages()

    def to_json(self) -> dict:
        """The object the command prints with ``--json``."""
        if self._json is None:
            self._json = json.loads(self._r.json())
        return self._json

    def __str__(self) -> str:
        return self._r.text()


class LintResult(_RenderedResult):
    """Every structural problem of a model (``onnxdbg lint``)."""

    @property
    def findings(self) -> list:
        """rule, severity ("error" | "warning" | "info"), node, op_type, graph, message."""
        return self.to_json()["findings"]

    @property
    def has_errors(self) -> bool:
        return self._r.has_errors()

    def __str__(self) -> str:
        return self._r.text(False)


def lint(model: ModelLike, *, disabled_rules: Sequence[str] = ()) -> LintResult:
    """Runs every lint rule (ONNX checker, strict shape inference, onnxdbg's own rules) in one
    pass. Raises ModelError only when the file cannot be read as a model at all; UsageError for
    an unknown rule name."""
    m = load(model)
    r = LintResult(_core.lint(m.path, list(disabled_rules)))
    _warn(r.messages)
    return r


class InspectResult(_RenderedResult):
    """What is in a model (``onnxdbg inspect``)."""


def inspect(model: ModelLike, *, mode: str = "basic", show_tensors: bool = False) -> InspectResult:
    """Summarises a model: mode "basic", "layers" (every node and subgraph), "attrs" (+
    attributes) or "weights" (+ per-weight statistics). With ``show_tensors``, also every
    tensor of the main graph with the dtype and shape ONNX shape inference gives it (symbolic
    dims by name; ``to_json()["tensors"]``: name, type, shape, producer). Raises UsageError for
    another mode."""
    m = load(model)
    return InspectResult(_core.inspect(m.path, mode, show_tensors))


class DiffResult(_RenderedResult):
    """The structural difference of two models (``onnxdbg diff``)."""

    @property
    def identical(self) -> bool:
        return bool(self.to_json().get("identical"))


def diff(a: ModelLike, b: ModelLike) -> DiffResult:
    """Diffs model ``a`` against ``b``: nodes only in one, changed nodes (attributes,
    weights, inputs), graph inputs/outputs/opsets that changed."""
    ma, mb = load(a), load(b)
    return DiffResult(_core.diff(ma.path, mb.path))


# --- bisect-optimizers ----------------------------------------------------------------------------


class BisectResult(_RenderedResult):
    """Which of ONNX Runtime's graph optimizations changed a model's outputs
    (``onnxdbg bisect-optimizers``): ``str()`` is the CLI's report, ``to_json()`` its JSON."""

    @property
    def outcome(self) -> str:
        """"no_difference" (the levels agree), "found" or "not_found"."""
        return self.to_json()["outcome"]

    @property
    def culprits(self) -> list:
        """The 1-minimal set of transformer (or rule) names whose disabling restores agreement;
        run ``onnxruntime:disable=A+B`` to apply it."""
        return list(self.to_json()["culprits"])

    @property
    def candidates(self) -> list:
        """The transformers ONNX Runtime's log says changed the model."""
        return list(self.to_json()["candidates"])

    @property
    def fused(self) -> list:
        """{"node": the node the culprits made, "replaced": the original nodes it stands for}."""
        return list(self.to_json()["fused"])

    @property
    def first_divergent_node(self) -> Optional[str]:
        """The first original node whose output differs with and without the culprits."""
        f = self.to_json()["first_divergent_node"]
        return None if f is None else f["node"]


def bisect_optimizers(model: ModelLike, *, backend: str = "onnxruntime:opt=all",
                      against: str = "onnxruntime:opt=disabled", inputs=_D["load_inputs"],
                      golden=_D["load_outputs"], golden_names: str = _D["golden_names"],
                      golden_layout: str = _D["golden_layout"],
                      atol: Union[float, Mapping[str, float]] = _D["atol"],
                      rtol: Union[float, Mapping[str, float]] = _D["rtol"],
                      iterations: Optional[int] = _D["iterations"], seed: int = _D["seed"],
                      input_shapes: Optional[Mapping[str, Sequence[int]]] = _D["input_shapes"],
                      val_range=_D["val_range"], error_stat: str = _D["error_stat"],
                      timeout: Optional[float] = _D["timeout"], save_models=None,
                      progress=True) -> BisectResult:
    """Finds which of ONNX Runtime's graph optimizations change ``model``'s outputs
    (``onnxdbg bisect-optimizers``): compares ``backend`` (an ONNX Runtime configuration, as
    ``--backends`` writes one) with ``against`` (a backend, or the ``golden`` outputs) on the same
    inputs, takes the graph transformers ONNX Runtime's log says changed the model, and finds a
    1-minimal set whose disabling (``onnxruntime:disable=``, ORT's
    ``optimization.disable_specified_optimizers``) restores agreement (group testing by binary
    splitting over delta debugging's items); then names the nodes the set fused and the first
    original node whose output differs.

    Args:
        inputs, golden: as :func:`compare` (a dict per sample, a list of them, or a file);
            golden_names, golden_layout: as :func:`compare`.
        atol, rtol, error_stat, iterations, seed, input_shapes, val_range: as :func:`compare`.
        timeout: seconds each session may take to load and run (None: 300).
        save_models: a folder for the optimized models with and without the culprits.

    Raises:
        UsageError for a ``backend`` that is not onnxruntime or bad options; ModelError for a
        malformed model; BackendError when a configuration cannot load or run the model.
    """
    m = load(model)
    options = dict(
        backend=backend, against=against, **_input_keywords(inputs, iterations, seed,
                                                            input_shapes, val_range),
        **_comparison_keywords(golden, atol, rtol, error_stat, golden_names, golden_layout),
        timeout=float(timeout or 0),
        save_models=_path_or_empty(save_models))
    r = _call(progress, _core.bisect_optimizers, m.path, options)
    result = BisectResult(r)
    _warn(result.messages)
    return result


# --- reduce ---------------------------------------------------------------------------------------


class ReducedModel(Model):
    """The model :func:`reduce` ended at (a :class:`Model`), with the reduction's report:
    ``str()`` prints the CLI's summary, ``to_json()`` its JSON."""

    def __init__(self, path: str, core_result, owned_dir: Optional[str]):
        super().__init__(path, _owned_dir=owned_dir)
        self._r = core_result
        self.messages: list = core_result.messages()

    @property
    def stopped(self) -> str:
        """Why the reduction stopped early ("" when it ran to its end); the model is then the
        best one so far."""
        return self._r.stopped()

    def to_json(self) -> dict:
        return json.loads(self._r.json())

    def __str__(self) -> str:
        return self._r.text()


def _reduce_output(output) -> tuple:
    """(owned folder or None, path): where reduce writes, a temporary folder of its own when the
    caller gives no path."""
    if output is not None:
        return None, os.fspath(output)
    owned = tempfile.mkdtemp(prefix="onnxdbg-reduce-py-")
    return owned, os.path.join(owned, "reduced.onnx")


def reduce(model: ModelLike, oracle: Optional[Callable[[bytes], bool]] = None, *,
           mode: str = _D["mode"], fail_on: Union[str, Sequence[str], None] = _D["fail_on"],
           backends: Union[str, Sequence[str]] = _D["backends"],
           atol: Union[float, Mapping[str, float]] = _D["atol"],
           rtol: Union[float, Mapping[str, float]] = _D["rtol"],
           error_stat: str = _D["error_stat"], fail_regex: Sequence[str] = _D["fail_regex"],
           strategies: Sequence[str] = _D["strategies"], inputs=_D["load_inputs"],
           iterations: Optional[int] = _D["iterations"], seed: int = _D["seed"],
           input_shapes: Optional[Mapping[str, Sequence[int]]] = _D["model_input_shapes"],
           val_range=_D["val_range"], keep_inputs: bool = _D["keep_inputs"],
           keep_outputs: bool = _D["keep_outputs"], any_failure: bool = _D["any_failure"],
           timeout: Optional[float] = _D["timeout"],
           max_memory: Union[int, str, None] = _D["max_memory"],
           max_iterations: Optional[int] = _D["max_iterations"], output=None,
           jobs: int = _D["jobs"], progress=True) -> ReducedModel:
    """Reduces a failing model to a minimal one that still fails (``onnxdbg reduce``).

    Args:
        oracle: a callable given each candidate's serialized ONNX model (bytes) that returns
            True when the candidate still shows the failure. Or leave it None and give
            ``fail_on`` ("mismatch", "error", "nan"): the built-in oracle runs candidates on
            ``backends`` (the first gives golden values) with ``atol``/``rtol``, and for
            "error" only errors matching one of ``fail_regex`` count.
        mode: "bisect", "linear" or "full" (delta debugging; Zeller and Hildebrandt, 2002), or
            ``strategies`` by name.
        inputs: a data file of input values, else ``iterations`` generated samples (seeds
            ``seed``, ``seed`` + 1, ..., as :func:`run`); a candidate fails if any sample does.
        error_stat: the statistic compared with ``atol``/``rtol`` for "mismatch" (as
            :func:`compare`).
        timeout, max_memory, max_iterations: limits of each backend run of the built-in oracle
            and of the reference runs that give golden values (seconds, bytes or a size such as
            ``"4GB"``, iterations of one Loop/Scan; as :func:`compare`).
        input_shapes: sizes of the model's dynamic input dims, fixed before reducing
            (``--model-input-shapes``): candidates then get values and static shapes.
        keep_inputs, keep_outputs: do not remove graph inputs / outputs.
        any_failure: with ``fail_on``, accept a candidate that fails in any way; by default it
            must fail as the original does (the same backend, load or run, and error message
            with numbers and names masked; or the same backends disagreeing), and one that
            fails otherwise counts as a pass (``--any-failure``).
        output: where the reduced model is written (after every success, so a Ctrl-C keeps the
            best so far); None: a temporary file owned by the result.

    Raises:
        UsageError for no oracle or both, an unknown mode or strategy; those of :func:`load`.
        An exception raised by ``oracle`` stops the reduction with an Error naming it; when a
        smaller failing model was found before, it is returned instead, with ``stopped`` set
        and an OnnxdbgWarning.
    """
    m = load(model)
    if (oracle is None) == (fail_on is None):
        raise UsageError("onnxdbg.reduce: give an oracle callable or fail_on=..., exactly one")
    owned, out = _reduce_output(output)
    fail = [fail_on] if isinstance(fail_on, str) else list(fail_on or [])
    try:
        options = dict(
            fail_on=fail, backends=_backend_list(backends), atol=_tolerance(atol),
            rtol=_tolerance(rtol), error_stat=error_stat, fail_regex=list(fail_regex),
            mode=mode, strategies=list(strategies), inputs=_path_or_empty(inputs),
            iterations=iterations, seed=int(seed), input_shapes=_shapes(input_shapes),
            val_range=_ranges(val_range), keep_inputs=bool(keep_inputs),
            keep_outputs=bool(keep_outputs), any_failure=bool(any_failure),
            journal=os.path.join(owned, "reduced.journal") if owned else "", jobs=int(jobs),
            **_limits(timeout, max_memory, max_iterations))
        r = _call(progress, _core.reduce, m.path, out, oracle, options)
        if r.stopped() and not r.best_so_far():
            r.raise_stopped()  # nothing was written: the oracle failed, say, on the original
        result = ReducedModel(out, r, owned)
    except BaseException:
        if owned:
            shutil.rmtree(owned, True)
        raise
    _warn(result.messages)
    if result.stopped:
        warnings.warn(f"the reduction stopped early ({result.stopped}); this is the smallest "
                      "failing model found before that", OnnxdbgWarning, stacklevel=2)
    return result


# --- surgeon, view --------------------------------------------------------------------------------


def extract(model: ModelLike, inputs: Sequence[str], outputs: Sequence[str], *,
            force: bool = False) -> Model:
    """The subgraph between tensors ``inputs`` and ``outputs`` as a model of its own
    (``onnxdbg surgeon extract``; types and shapes from the model and shape inference).
    Raises UsageError for a name that is no tensor of the model, ModelError when lint finds
    errors in the result (unless ``force``)."""
    m = load(model)
    d = tempfile.mkdtemp(prefix="onnxdbg-py-")
    try:
        path = os.path.join(d, "model.onnx")
        r = _core.extract(m.path, path, list(inputs), list(outputs), bool(force))
        _warn(r.messages())
        return Model(path, _owned_dir=d)
    except BaseException:
        shutil.rmtree(d, True)
        raise


def view(model: ModelLike, path: Union[str, os.PathLike], *,
         report: Union[CompareResult, dict, None] = None, diff: Optional[ModelLike] = None,
         lint: bool = False, highlight: Sequence[str] = ()) -> None:
    """Writes the interactive HTML view of ``model`` to ``path`` (``onnxdbg view``), painted
    with a comparison (a CompareResult or the dict of ``run --json``), a diff against a second
    model, lint findings, or highlighted node names."""
    m = load(model)
    rep = ""
    if isinstance(report, CompareResult):
        rep = json.dumps(report.to_json())
    elif report is not None:
        rep = json.dumps(report)
    other = load(diff).path if diff is not None else ""
    _warn(_core.view(m.path, os.fspath(path), rep, other, bool(lint), list(highlight)))


def _write_html_overlay(model: ModelLike, overlay: dict, path: Union[str, os.PathLike]) -> None:
    """The viewer page of ``model`` painted with ``overlay`` (an object shaped as ``run
    --json``'s); used by onnxdbg.torch."""
    view(model, path, report=overlay)


# --- data files -----------------------------------------------------------------------------------


def _npy_bytes(array: Any) -> bytes:
    a = np.asarray(array)
    out = io.BytesIO()
    if a.dtype.name in _NARROW_DTYPES or a.dtype.name == "bfloat16":
        # np.save would write dtype.str ('<V1', '<V2', '<f1'), losing the type: the header names
        # it as numpy with ml_dtypes parses it back (np.dtype('int4')), as onnxdbg reads it.
        a = np.ascontiguousarray(a)
        np.lib.format.write_array_header_1_0(
            out, {"descr": a.dtype.name, "fortran_order": False, "shape": a.shape})
        out.write(a.tobytes())
    else:
        np.lib.format.write_array(out, a, allow_pickle=False)
    return out.getvalue()


def save_npy(path: Union[str, os.PathLike], array: Any) -> None:
    """Writes ``array`` to ``path`` as np.save does, except that an ml_dtypes array (bfloat16,
    float8_e4m3fn, int4, ...) keeps its type: its header's ``descr`` is the dtype's name, which
    onnxdbg reads, and numpy too once ml_dtypes is imported (np.save writes ``'<V1'``, which
    names no type and which onnxdbg refuses)."""
    with open(path, "wb") as f:
        f.write(_npy_bytes(array))


def save_npz(path: Union[str, os.PathLike], arrays: Mapping[str, Any], *,
             compress: bool = False) -> None:
    """Writes ``arrays`` to an .npz file at ``path`` as np.savez (np.savez_compressed when
    ``compress``) does, each entry written as by :func:`save_npy`, so that ml_dtypes arrays keep
    their type (for onnxdbg's ``--load-inputs`` and ``onnxdbg data``)."""
    mode = zipfile.ZIP_DEFLATED if compress else zipfile.ZIP_STORED
    with zipfile.ZipFile(path, "w", compression=mode, allowZip64=True) as z:
        for name, array in arrays.items():
            z.writestr(name + ".npy", _npy_bytes(array))


# --- framework bridges, imported on first use -----------------------------------------------------

# name -> (the frameworks it imports, what to install)
_BRIDGES = {"torch": (("torch",), "PyTorch: pip install torch"),
            "tf": (("tensorflow", "tf2onnx", "onnx"),
                   "TensorFlow, tf2onnx and onnx: pip install onnxdbg[tf]")}


# --- batch ----------------------------------------------------------------------------------------


class BatchResult(_RenderedResult):
    """What ``onnxdbg.batch`` did (``onnxdbg batch``): ``str()`` is the CLI's summary,
    ``to_json()`` the report folder's summary.json."""

    @property
    def jobs(self) -> list:
        """One dict per (model, command), in model then command order: model, model_sha256,
        command, key, status ("pass" | "fail" | "error" | "timeout" | "crashed"), exit_code,
        line (the verdict, first lint error, error or cause), seconds, attempts, cached, page
        (the job's HTML page, relative to the report folder, or None) and details (what the
        command's JSON said: verdict, first_divergent_node, backend_errors for run; errors and
        warnings for lint)."""
        return list(self.to_json()["jobs"])

    @property
    def counts(self) -> dict:
        """Jobs by status: {"pass": n, "fail": n, "error": n, "timeout": n, "crashed": n}."""
        return dict(self.to_json()["counts"])

    @property
    def fleet(self) -> dict:
        """The views over all jobs: op_types (first divergent op type and backend, with the
        models), backend_errors (backend and stage, with the models), slowest, crashes."""
        return dict(self.to_json()["fleet"])

    @property
    def report_dir(self) -> str:
        """The report folder: summary.json, index.html and jobs/<key>/ per job."""
        return self.to_json()["report_dir"]

    @property
    def cancelled(self) -> bool:
        """Whether Ctrl-C stopped the batch (the jobs not finished are not in ``jobs``)."""
        return bool(self.to_json()["cancelled"])


def batch(models: Sequence[Union[str, os.PathLike]], commands: Sequence[str], *,
          report_dir: Union[str, os.PathLike], jobs: int = _D["batch_jobs"],
          timeout: float = _D["job_timeout"], max_memory: Union[int, str, None] = _D["job_max_memory"],
          executor: str = _D["executor"], address: Optional[str] = _D["address"],
          rerun: bool = _D["rerun"], retries: int = _D["retries"],
          progress: Union[bool, Callable[[str], None]] = True) -> BatchResult:
    """Runs onnxdbg commands on many models (``onnxdbg batch``): every (model, command) is a
    job, run as an ``onnxdbg`` process with ``timeout`` seconds and ``max_memory`` bytes (its
    data size limit; an int or "4GiB"), ``jobs`` at once on this machine (``executor="local"``)
    or as Ray tasks on the cluster at ``address`` (``executor="ray"``; Ray is imported by this
    Python, ``sys.executable``: ``pip install ray``).

    ``models``: .onnx files, folders (searched recursively for *.onnx) and list files (one model
    per line, ``PATH [OPTIONS...]``; the options, such as ``--input-shapes x:1x3x224x224``, go to
    that model's run, reduce and bisect-optimizers). ``commands``: onnxdbg commands without the
    model, as on the command line: ``"run --backends reference,onnxruntime --layerwise"``,
    ``"lint"``.

    Each finished job's result is cached in ``report_dir`` (key: the model's bytes, the command,
    the options and onnxdbg's version), so calling ``batch`` again runs only the jobs that are
    missing, timed out or crashed (``rerun=True`` runs all). A job whose process is killed runs
    again ``retries`` times before it is ``crashed``. A missing or malformed model is an "error"
    job, not an exception.

    Raises UsageError for no model or command, an unknown command, a command that gives
    ``--json``/``--html``/``-o`` itself, a report folder that cannot be written, or
    ``executor="ray"`` without Ray or a reachable cluster (nothing runs then); NotFoundError when
    the ``onnxdbg`` executable is not found (set ``$ONNXDBG_CLI``); KeyboardInterrupt on Ctrl-C,
    after writing summary.json with the jobs that finished."""
    options = {"jobs": jobs, "timeout": timeout, "executor": executor, "address": address,
               "rerun": rerun, "retries": retries, "python": sys.executable,
               "max_memory": None if max_memory is None else _memory(max_memory)}
    r = BatchResult(_call(progress, _core.batch, [os.fspath(m) for m in models],
                          list(commands), os.fspath(report_dir), options))
    _warn(r.messages)
    return r


def __getattr__(name: str):
    """PEP 562: ``onnxdbg.torch`` (the PyTorch bridge) and ``onnxdbg.tf`` (TensorFlow) are
    imported the first time they are used, so ``import onnxdbg`` never imports a framework, and ``import onnxdbg; onnxdbg.torch.compare(...)``
    works without a separate ``import onnxdbg.torch``. Raises ImportError naming the framework
    when it is not installed, AttributeError for any other missing name."""
    if name in _BRIDGES:
        import importlib

        try:
            return importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as e:
            frameworks, install = _BRIDGES[name]
            if (e.name or "").split(".")[0] in frameworks:
                raise ImportError(f"onnxdbg.{name} needs {install}") from e
            raise
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
