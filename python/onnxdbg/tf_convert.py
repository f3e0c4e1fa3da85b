"""onnxdbg.tf: why a TensorFlow/Keras model does not convert to ONNX with tf2onnx, before you
debug the ONNX file: at which opsets tf2onnx converts it, which TensorFlow ops it leaves
unconverted (it logs "Tensorflow op [...] is not supported" and still writes the model, with the
TF op as a node ONNX Runtime will refuse), and what its errors mean.

    >>> import onnxdbg
    >>> d = onnxdbg.tf.diagnose_conversion(keras_model, opsets=(9, 11, 13))
    >>> print(d)              # one line per opset tried, the unconverted ops, the fix
    >>> d.min_opset           # 11: the lowest opset that converts every op
    >>> d.unsupported_ops     # [UnsupportedOp(op_type="Cumsum", node=".../Cumsum", layer="...")]

Follows tf2onnx's own conversion entry points (``tf2onnx.convert.from_keras`` for a Keras model,
``from_function`` for a ``tf.function`` or a SavedModel's serving signature) and its
Troubleshooting page's explanation of "must be Const". Needs TensorFlow and tf2onnx
(``pip install onnxdbg[tf]``); ``import onnxdbg`` alone never imports TensorFlow.
"""

from __future__ import annotations

import json
import logging
import re
import time
from dataclasses import asdict, dataclass, field
from typing import Any, List, Optional, Sequence

import onnx
import tensorflow as tf
import tf2onnx

__all__ = ["diagnose_conversion", "ConversionDiagnosis", "ConversionAttempt", "UnsupportedOp"]

# Outcomes of one conversion.
OK = "ok"
UNCONVERTED = "unconverted ops"  # it wrote a model with TensorFlow ops left in it
FAILED = "failed"  # it raised

_MUST_BE_CONST = re.compile(r"(\S+)\s+must be Const|must be Const.*?(\S+:\d+)")
_LOGGED_UNSUPPORTED = re.compile(r"Tensorflow op \[(?P<node>[^:\]]+)\s*:\s*(?P<op>[^\]]+)\] is not supported")


@dataclass
class UnsupportedOp:
    """A TensorFlow op tf2onnx could not convert: its op type ("Cumsum"), the node's name in the
    converted graph, and the Keras layer (or name scope) it belongs to."""

    op_type: str
    node: str
    layer: str


@dataclass
class ConversionAttempt:
    """One tf2onnx conversion at ``opset``: outcome "ok", "unconverted ops" (a model was written
    with TensorFlow ops in it) or "failed" (tf2onnx raised); the error's first line and, for
    "must be Const", what it means; the ops left unconverted; the nodes of the model; seconds."""

    opset: int
    outcome: str
    error: str = ""
    explanation: str = ""
    unsupported_ops: List[UnsupportedOp] = field(default_factory=list)
    nodes: int = 0
    seconds: float = 0.0


@dataclass
class ConversionDiagnosis:
    """What ``diagnose_conversion`` found: every attempt in opset order, ``min_opset`` (the lowest
    opset tried that converts every op, None when none does), ``unsupported_ops`` (those of the
    lowest opset that left some, with the opset that converts them in ``fixed_at``), and the
    model described."""

    model: str
    attempts: List[ConversionAttempt]
    min_opset: Optional[int]
    unsupported_ops: List[UnsupportedOp]
    fixed_at: Optional[int]

    @property
    def ok(self) -> bool:
        """Whether some opset tried converts every op."""
        return self.min_opset is not None

    def to_json(self) -> dict:
        """The diagnosis as plain data (dataclasses as dicts)."""
        return asdict(self)

    def __str__(self) -> str:
        lines = [f"tf2onnx {tf2onnx.__version__} on {self.model} (TensorFlow {tf.__version__}):"]
        for a in self.attempts:
            what = {OK: f"converts ({a.nodes} nodes)",
                    UNCONVERTED: "leaves " + ", ".join(sorted({u.op_type for u in a.unsupported_ops}))
                    + " unconverted",
                    FAILED: f"fails: {a.error}"}[a.outcome]
            lines.append(f"  opset {a.opset:>2}: {what}  ({a.seconds:.1f} s)")
            if a.explanation:
                lines.append(f"            {a.explanation}")
        for u in self.unsupported_ops:
            lines.append(f"  unconverted: {u.op_type} (node {u.node}, layer {u.layer})")
        if self.min_opset is None:
            lines.append("no opset tried converts every op: ONNX has no counterpart at these "
                         "opsets; try a newer opset, or change the model around the op")
        elif self.fixed_at is not None:
            lines.append(f"fix: convert at opset {self.fixed_at} or newer "
                         f"(python -m tf2onnx.convert ... --opset {self.fixed_at})")
        else:
            lines.append(f"converts at every opset from {self.min_opset} tried")
        return "\n".join(lines)


class _Captured(logging.Handler):
    """The log records of tf2onnx during one conversion."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.messages: List[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def _layer_of(node: str) -> str:
    """The Keras layer (first name scope below the model's) of a converted node's name."""
    parts = [p for p in node.split("/") if p]
    return parts[1] if len(parts) > 2 else (parts[0] if parts else node)


def _unconverted(model: onnx.ModelProto, opset: int, logged: Sequence[str]) -> List[UnsupportedOp]:
    """Default-domain nodes whose op ONNX does not have at ``opset`` (TensorFlow ops tf2onnx left
    in the graph), and those tf2onnx logged as not supported."""
    out, seen = [], set()
    for n in model.graph.node:
        if n.domain not in ("", "ai.onnx"):
            continue
        try:
            onnx.defs.get_schema(n.op_type, opset, "")
        except onnx.defs.SchemaError:
            seen.add(n.name)
            out.append(UnsupportedOp(n.op_type, n.name, _layer_of(n.name)))
    for m in logged:
        hit = _LOGGED_UNSUPPORTED.search(m)
        if hit and hit["node"].strip() not in seen:
            seen.add(hit["node"].strip())
            out.append(UnsupportedOp(hit["op"].strip(), hit["node"].strip(),
                                     _layer_of(hit["node"].strip())))
    return out


def _explain(error: str) -> str:
    """What a tf2onnx error means, where it has a known meaning."""
    if "must be Const" in error:
        m = _MUST_BE_CONST.search(error)
        tensor = next((g for g in (m.groups() if m else ()) if g), "an input")
        return (f"tf2onnx needs {tensor} to be a constant when it converts (a shape, axis or "
                f"size computed at run time): feed it from a constant or a fixed input shape, "
                f"or try a newer opset, where the ONNX op takes it as an input")
    if "Cannot find node with output" in error:
        return ("a tensor tf2onnx looks for was removed or renamed by an earlier rewrite: "
                "try another opset, or convert without optimizations")
    return ""


def _convert(model: Any, opset: int, input_signature: Any) -> onnx.ModelProto:
    """tf2onnx's conversion of a Keras model, a tf.function or a SavedModel folder."""
    if isinstance(model, str):
        loaded = tf.saved_model.load(model)
        fn = loaded.signatures["serving_default"]
        proto, _ = tf2onnx.convert.from_function(fn, input_signature=input_signature,
                                                 opset=opset)
        return proto
    if isinstance(model, tf.keras.Model):
        proto, _ = tf2onnx.convert.from_keras(model, input_signature=input_signature,
                                              opset=opset)
        return proto
    proto, _ = tf2onnx.convert.from_function(model, input_signature=input_signature, opset=opset)
    return proto


def _attempt(model: Any, opset: int, input_signature: Any) -> ConversionAttempt:
    captured = _Captured()
    logger = logging.getLogger("tf2onnx")
    logger.addHandler(captured)
    start = time.monotonic()
    try:
        proto = _convert(model, opset, input_signature)
    except Exception as e:  # noqa: BLE001 - every tf2onnx failure is a verdict here
        first = (str(e).strip().splitlines() or [type(e).__name__])[0]
        return ConversionAttempt(opset, FAILED, error=f"{type(e).__name__}: {first}",
                                 explanation=_explain(str(e) + " " + " ".join(captured.messages)),
                                 seconds=time.monotonic() - start)
    finally:
        logger.removeHandler(captured)
    unsupported = _unconverted(proto, opset, captured.messages)
    return ConversionAttempt(opset, UNCONVERTED if unsupported else OK,
                             unsupported_ops=unsupported, nodes=len(proto.graph.node),
                             explanation=_explain(" ".join(captured.messages)),
                             seconds=time.monotonic() - start)


def default_opsets() -> List[int]:
    """tf2onnx's default opset, then 13, 17, 18 and the newest it supports, ascending."""
    const = tf2onnx.constants
    newest = max(const.OPSET_TO_IR_VERSION)
    return sorted({const.PREFERRED_OPSET, 13, 17, 18, newest})


def diagnose_conversion(model: Any, *, opsets: Optional[Sequence[int]] = None,
                        input_signature: Any = None) -> ConversionDiagnosis:
    """Converts ``model`` (a Keras model, a ``tf.function``, or a SavedModel folder's path) with
    tf2onnx at each opset of ``opsets`` (default: ``default_opsets()``), ascending, and says which
    convert every op, which leave TensorFlow ops unconverted (found both in tf2onnx's log and as
    default-domain nodes ONNX lacks at that opset), and which fail, with "must be Const" and
    "Cannot find node with output" explained. ``input_signature``: tf.TensorSpecs, as tf2onnx
    takes them (None: the model's own). Raises ValueError for an empty ``opsets``; tf2onnx's
    errors are attempts, not exceptions."""
    chosen = sorted(set(opsets)) if opsets is not None else default_opsets()
    if not chosen:
        raise ValueError("diagnose_conversion needs at least one opset")
    attempts = [_attempt(model, o, input_signature) for o in chosen]
    ok = [a.opset for a in attempts if a.outcome == OK]
    first_bad = next((a for a in attempts if a.outcome == UNCONVERTED), None)
    fixed_at = None
    if first_bad is not None:
        fixed_at = next((o for o in ok if o > first_bad.opset), None)
    name = model if isinstance(model, str) else getattr(model, "name", type(model).__name__)
    return ConversionDiagnosis(str(name), attempts, min(ok) if ok else None,
                               first_bad.unsupported_ops if first_bad else [], fixed_at)


def _main() -> None:  # pragma: no cover - python -m onnxdbg.tf SAVED_MODEL [OPSET...]
    import sys
    d = diagnose_conversion(sys.argv[1], opsets=[int(o) for o in sys.argv[2:]] or None)
    print(d)
    print(json.dumps(d.to_json(), indent=2))


if __name__ == "__main__":
    _main()
