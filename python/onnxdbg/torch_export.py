"""onnxdbg.torch.diagnose_export: why a torch.nn.Module does not export to ONNX, before any
ONNX file exists: which exporter and opset work, which submodule fails, on which op, and what
fixes it.

    >>> import onnxdbg.torch
    >>> d = onnxdbg.torch.diagnose_export(model, (x,))
    >>> print(d)                  # attempts per exporter and opset, the failing submodules
    >>> d.min_opset               # {"torchscript": 14, "dynamo": None}
    >>> d.failing_modules[0].path, d.failing_modules[0].op   # ("mask", "aten::tril")
    >>> d.repro("tril_repro.py")  # a standalone script that fails the same way

The module runs once eagerly with forward hooks on every submodule (their inputs are captured);
each exporter is tried at ascending opsets, jumping to the opset an error names ("Support for
this operator was added in version 14"); where an exporter fails, the module tree is searched
top-down, each submodule exported alone with its captured inputs, for the smallest ones that
fail alone. The TorchScript exporter traces: a Python ``if`` on a tensor's value does not fail
it, it bakes the branch the traced input took (a TracerWarning, named here with its module and
source line).
"""

from __future__ import annotations

import contextlib
import inspect
import json
import os
import re
import sys
import tempfile
import time
import warnings
from collections import defaultdict
from dataclasses import asdict, dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Sequence, Set, Tuple

import numpy as np
import torch

from . import torch as _torch_bridge

__all__ = ["diagnose_export", "ExportDiagnosis", "ExportAttempt", "FailingModule"]

# Error classes, as ExportAttempt.error_class says them.
UNSUPPORTED_OP = "unsupported op"
CONTROL_FLOW = "data-dependent control flow"
SHAPE_GUARD = "dynamic-shape guard"
UNDEFINED_INPUT = "undefined input"
UNSUPPORTED_DTYPE = "unsupported dtype"
OTHER = "other"

_CANDIDATE_OPSETS = (9, 11, 13, 14, 15, 16, 17, 18, 19, 20)
# The dynamo exporter writes opset 18 and converts below it (often failing, keeping 18).
_DYNAMO_LOWEST = 18
# Errors another opset cannot fix: the search over opsets stops at them.
_OPSET_INDEPENDENT = ("data-dependent control flow", "dynamic-shape guard", "undefined input",
                      "unsupported dtype")


@dataclass
class ExportAttempt:
    """One export: the exporter ("torchscript" or "dynamo"), the opset (None: the exporter's
    default), its outcome ("ok", "failed", "not available"), and for a failure its class (one of
    "unsupported op", "data-dependent control flow", "dynamic-shape guard", "undefined input",
    "unsupported dtype", "other"), first error line, the op it names ("aten::tril") and the
    opset the error says has it. ``warnings`` holds the tracer's warnings (a baked branch);
    ``seconds`` the export's wall time."""

    exporter: str
    opset: Optional[int]
    outcome: str
    error_class: str = ""
    error: str = ""
    op: str = ""
    needs_opset: Optional[int] = None
    warnings: List[str] = field(default_factory=list)
    seconds: float = 0.0


@dataclass
class FailingModule:
    """A smallest submodule that fails to export alone (its children export, or it has none):
    its path in the module tree ("" for the root), class name, the failing attempt, the source
    line of its forward that calls the op (``file:line``, "" when not found), and the fix in
    words."""

    path: str
    type: str
    attempt: ExportAttempt
    source: str = ""
    fix: str = ""


def _classify(e: BaseException) -> Tuple[str, str, Optional[int]]:
    """(error class, op, opset that has it) of an export error, from its type and message."""
    text = str(e)
    op = ""
    m = re.search(r"operator '([\w:.]+)'", text)
    if m:
        op = m.group(1)
    needs = re.search(r"added in (?:opset |version )(\d+)", text)
    name = type(e).__name__
    if name == "UnsupportedOperatorError" or "is not supported" in text and op:
        return UNSUPPORTED_OP, op, int(needs.group(1)) if needs else None
    if re.search(r"data.dependent|GuardOnDataDependent|Could not guard on data", text):
        return CONTROL_FLOW, op, None
    if re.search(r"[Cc]onstraints violated|guard|Dim\(", text):
        return SHAPE_GUARD, op, None
    if re.search(r"Input \S+ is undefined|undefined value", text):
        return UNDEFINED_INPUT, op, None
    if re.search(r"dtype|ScalarType|not supported for type", text):
        return UNSUPPORTED_DTYPE, op, None
    return OTHER, op, None


@contextlib.contextmanager
def _quiet():
    """Sends what the exporters print (the dynamo exporter's FX graphs and log lines, written
    to the process's stdout and stderr) to a discarded file while an export runs."""
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    saved = [os.dup(1), os.dup(2)]
    with tempfile.TemporaryFile() as sink:
        os.dup2(sink.fileno(), 1)
        os.dup2(sink.fileno(), 2)
        try:
            yield
        finally:
            for stream in (sys.stdout, sys.stderr):
                stream.flush()
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            for fd in saved:
                os.close(fd)


def _export_once(module: torch.nn.Module, args: Tuple[Any, ...], exporter: str,
                 opset: Optional[int]) -> ExportAttempt:
    """One export into memory, its outcome, error class and tracer warnings."""
    t0 = time.perf_counter()
    ex: Dict[str, Any] = {} if opset is None else {"opset_version": opset}
    with warnings.catch_warnings(record=True) as caught, _quiet():
        warnings.simplefilter("always")
        try:
            if exporter == "dynamo":
                torch.onnx.export(module, tuple(args), dynamo=True, verbose=False, **ex)
            else:
                _torch_bridge._export_torchscript(module, args, {}, ex, _torch_bridge._has_dynamo())
        except Exception as e:  # noqa: BLE001: every export error is a diagnosis
            kind, op, needs = _classify(e)
            return ExportAttempt(exporter, opset, "failed", kind, _torch_bridge._error_line(e), op,
                                 needs, seconds=time.perf_counter() - t0)
    traced = [f"{os.path.basename(w.filename)}:{w.lineno}: {str(w.message).splitlines()[0]}"
              for w in caught if type(w.message).__name__ == "TracerWarning"]
    return ExportAttempt(exporter, opset, "ok", warnings=traced,
                         seconds=time.perf_counter() - t0)


def _opsets(opsets: Optional[Sequence[int]]) -> List[int]:
    """The opsets to try, ascending, within what this torch's TorchScript exporter knows."""
    if opsets:
        return sorted(set(int(o) for o in opsets))
    try:
        from torch.onnx import _constants
        top = int(_constants.ONNX_MAX_OPSET)
    except (ImportError, AttributeError):
        top = 17
    return [o for o in _CANDIDATE_OPSETS if o <= top]


def _try_exporter(module: torch.nn.Module, args: Tuple[Any, ...], exporter: str,
                  opsets: List[int]) -> List[ExportAttempt]:
    """Attempts at ascending opsets until one works: an error naming the opset that has its op
    jumps there; another error goes to the next opset. Returns every attempt, in order."""
    if exporter == "dynamo" and not _torch_bridge._has_dynamo():
        return [ExportAttempt("dynamo", None, "not available",
                              error=f"torch {torch.__version__} has no dynamo exporter")]
    if exporter == "dynamo":
        opsets = [o for o in opsets if o >= _DYNAMO_LOWEST] or opsets[-1:]
    attempts: List[ExportAttempt] = []
    k = 0
    while k < len(opsets):
        a = _export_once(module, args, exporter, opsets[k])
        attempts.append(a)
        if a.outcome == "ok" or a.error_class in _OPSET_INDEPENDENT:
            break
        if a.needs_opset and a.needs_opset > opsets[k]:
            later = [i for i, o in enumerate(opsets) if o >= a.needs_opset]
            if not later:
                break
            k = later[0]
        else:
            k += 1
    return attempts


def _capture_inputs(module: torch.nn.Module, args: Tuple[Any, ...], kwargs: Mapping[str, Any]
                    ) -> Tuple[Dict[str, Tuple[Any, ...]], Dict[str, Set[str]]]:
    """One eager forward with hooks: each submodule's positional inputs at its first call, and
    the names of the torch functions each submodule called, its children's included ("tril",
    "linear"; recorded by a TorchFunctionMode where this torch has one)."""
    seen: Dict[str, Tuple[Any, ...]] = {}
    called: Dict[str, Set[str]] = defaultdict(set)
    stack: List[str] = []
    handles = []
    for path, sub in module.named_modules():
        def pre(mod, inputs, path=path):
            seen.setdefault(path, tuple(i.detach().clone() if torch.is_tensor(i) else i
                                        for i in inputs))
            stack.append(path)

        def post(mod, inputs, output, path=path):
            if stack and stack[-1] == path:
                stack.pop()
        handles.append(sub.register_forward_pre_hook(pre))
        handles.append(sub.register_forward_hook(post))
    mode_class = getattr(torch.overrides, "TorchFunctionMode", None)
    recorder = contextlib.nullcontext()
    if mode_class is not None:
        class _Recorder(mode_class):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                name = getattr(func, "__name__", "")
                for path in stack:
                    called[path].add(name)
                return func(*args, **(kwargs or {}))
        recorder = _Recorder()
    try:
        with torch.no_grad(), recorder:
            module(*args, **dict(kwargs))
    finally:
        for h in handles:
            h.remove()
    return seen, dict(called)


def _source_of(sub: torch.nn.Module, attempt: ExportAttempt) -> str:
    """file:line of the line of ``sub``'s forward the failure points at: the one that calls the
    op ("aten::tril" -> "tril"), for control flow its first ``if``/``while``; else its ``def``;
    "" when the source cannot be read."""
    try:
        lines, start = inspect.getsourcelines(type(sub).forward)
        path = inspect.getsourcefile(type(sub).forward) or ""
    except (OSError, TypeError):
        return ""
    short = attempt.op.split("::")[-1].rstrip("_")
    pattern = (r"^\s*(if|elif|while)\b" if attempt.error_class == CONTROL_FLOW
               else rf"\b{re.escape(short)}\b" if short else None)
    for k, line in enumerate(lines):
        if pattern and re.search(pattern, line):
            return f"{os.path.basename(path)}:{start + k}"
    return f"{os.path.basename(path)}:{start}"


def _fix(a: ExportAttempt) -> str:
    """The fix of a failed attempt, in words."""
    if a.error_class == UNSUPPORTED_OP and a.needs_opset:
        return (f"export at opset {a.needs_opset} or later (opset_version={a.needs_opset}), "
                f"which has {a.op}")
    if a.error_class == UNSUPPORTED_OP:
        return (f"no opset of this exporter has {a.op or 'the op'}: rewrite the call with ops "
                f"that export, or register a custom symbolic (torch.onnx.register_custom_op_"
                f"symbolic)")
    if a.error_class == CONTROL_FLOW:
        return ("torch.export cannot follow a Python branch on a tensor's value: use torch.cond, "
                "or dynamo=False (the TorchScript exporter bakes the branch of the traced input)")
    if a.error_class == SHAPE_GUARD:
        return "give the dynamic dims a range (dynamic_shapes=...) or export with static shapes"
    if a.error_class == UNSUPPORTED_DTYPE:
        return "cast the tensor to a dtype ONNX has before the call (float32, int64)"
    return "see the error; try the other exporter"


def _localize(module: torch.nn.Module, inputs: Dict[str, Tuple[Any, ...]],
              called: Dict[str, Set[str]], root: ExportAttempt, notes: List[str],
              count: List[int]) -> List[FailingModule]:
    """The smallest submodules that fail alone at the exporter and opset of ``root`` (the whole
    module's failed attempt), top-down from the root's children: a failing child is searched
    further, a failing module whose children all export is a culprit. For an unsupported op
    that the eager run saw called ("aten::tril" as torch.tril or Tensor.tril), a submodule that
    never called it is not exported: it cannot fail on that op."""
    exporter, opset = root.exporter, root.opset
    short = root.op.split("::")[-1].strip("_") if root.error_class == UNSUPPORTED_OP else ""
    seen_op = bool(short) and any(n.strip("_") == short for n in called.get("", ()))

    def fails(path: str, sub: torch.nn.Module) -> Optional[ExportAttempt]:
        if path not in inputs:
            notes.append(f"submodule '{path}' ({type(sub).__name__}) was not tried alone: the "
                         f"eager run never called it through forward")
            return None
        if seen_op and not any(n.strip("_") == short for n in called.get(path, ())):
            return None
        count[0] += 1
        a = _export_once(sub, inputs[path], exporter, opset)
        return a if a.outcome == "failed" else None

    def search(path: str, sub: torch.nn.Module, attempt: ExportAttempt) -> List[FailingModule]:
        found: List[FailingModule] = []
        for name, child in sub.named_children():
            child_path = f"{path}.{name}" if path else name
            a = fails(child_path, child)
            if a is not None:
                found += search(child_path, child, a)
        if found:
            return found
        return [FailingModule(path, type(sub).__name__, attempt, _source_of(sub, attempt),
                              _fix(attempt))]

    return search("", module, root)


def _baked_branches(module: torch.nn.Module, attempts: List[ExportAttempt]) -> List[str]:
    """Notes for the TracerWarnings of the TorchScript exports that worked: the branch or value
    the trace baked, with the submodule whose forward holds the line."""
    out: List[str] = []
    for a in attempts:
        if a.exporter != "torchscript" or a.outcome != "ok":
            continue
        for w in a.warnings:
            where = w.split(": ", 1)[0]
            owner = _owner_of(module, where)
            out.append(f"the TorchScript exporter (opset {a.opset}) traced through a Python value "
                       f"of a tensor at {where}{owner}: the exported model keeps the branch the "
                       f"traced input took, whatever its input ({w.split(': ', 1)[-1]})")
        break
    return out


def _owner_of(module: torch.nn.Module, where: str) -> str:
    """" in submodule 'p' (Class)" whose forward spans file:line ``where``, or ""."""
    name, _, line = where.rpartition(":")
    for path, sub in module.named_modules():
        try:
            lines, start = inspect.getsourcelines(type(sub).forward)
            path_file = os.path.basename(inspect.getsourcefile(type(sub).forward) or "")
        except (OSError, TypeError):
            continue
        if path_file == name and line.isdigit() and start <= int(line) < start + len(lines):
            return f" in {'submodule ' + repr(path) if path else 'the root module'} " \
                   f"({type(sub).__name__})"
    return ""


_REPRO = '''"""Repro written by onnxdbg.torch.diagnose_export: {what}.
Exports the failing submodule '{path}' ({cls}) alone with the inputs it got in the eager run.
Expected: {error}
"""
import sys

import numpy as np
import torch

sys.path.insert(0, {src_dir!r})  # where {cls} is defined ({module_name})
module = torch.load({pt!r}, weights_only=False)  # the submodule, pickled (written by onnxdbg)
module.eval()
data = np.load({npz!r})
args = tuple(torch.from_numpy(data[f"arg{{i}}"]) for i in range({nargs}))
torch.onnx.export(module, args, "repro.onnx", opset_version={opset}{dynamo})
print("exported: the failure did not reproduce")
'''


@dataclass
class ExportDiagnosis:
    """What :func:`diagnose_export` found. ``ok``: every available exporter exported the module
    at the first opset tried; ``attempts`` every export of the whole module, in order;
    ``min_opset`` per exporter, the lowest opset tried that works (None: none worked or the
    exporter is not available); ``failing_modules`` the smallest submodules that fail alone (at
    the first failing opset of each exporter); ``notes`` what else was seen (a baked branch, a
    submodule not tried); ``exports`` how many exports ran (localization included);
    ``eager_error`` when the module's own forward raised (then nothing was exported)."""

    ok: bool
    attempts: List[ExportAttempt]
    min_opset: Dict[str, Optional[int]]
    failing_modules: List[FailingModule]
    notes: List[str]
    exports: int
    seconds: float
    eager_error: str = ""
    _module: Any = field(default=None, repr=False, compare=False)
    _inputs: Dict[str, Tuple[Any, ...]] = field(default_factory=dict, repr=False, compare=False)

    def to_json(self) -> dict:
        """The diagnosis as a JSON-ready dict (attempts, min_opset, failing_modules, notes)."""
        d = {k: v for k, v in asdict(self).items() if not k.startswith("_")}
        return json.loads(json.dumps(d))

    def __str__(self) -> str:
        if self.eager_error:
            return f"the module's own forward raises, so no export was tried: {self.eager_error}"
        lines = ["attempts:"]
        for a in self.attempts:
            what = a.outcome if a.outcome != "failed" else f"failed ({a.error_class}): {a.error}"
            if a.outcome == "not available":
                what += f": {a.error}"
            lines.append(f"  {a.exporter:<11} opset {a.opset if a.opset else 'default':<7} {what}")
        for exporter, opset in self.min_opset.items():
            missing = [a for a in self.attempts if a.exporter == exporter
                       and a.outcome == "not available"]
            lines.append(f"{exporter}: " + (f"exports from opset {opset}" if opset
                                            else "not available in this torch" if missing
                                            else "no opset tried exports the module"))
        for f in self.failing_modules:
            name = f"'{f.path}'" if f.path else "the root module"
            lines.append(f"fails alone: {name} ({f.type}){' at ' + f.source if f.source else ''}"
                         f", {f.attempt.exporter} opset {f.attempt.opset}: "
                         f"{f.attempt.op + ': ' if f.attempt.op else ''}{f.attempt.error_class}; "
                         f"fix: {f.fix}")
        lines += [f"note: {n}" for n in self.notes]
        lines.append(f"{self.exports} exports in {self.seconds:.2f} s")
        return "\n".join(lines)

    def repro(self, path: str, index: int = 0) -> str:
        """Writes a standalone script reproducing failing module ``index`` (at ``path``, with the
        pickled submodule at ``path``.pt and its inputs at ``path``.npz beside it) and returns
        the script's path. Raises IndexError when nothing failed, ValueError when the
        submodule's class cannot be imported by another process (defined in __main__)."""
        f = self.failing_modules[index]
        sub = self._module.get_submodule(f.path) if f.path else self._module
        if type(sub).__module__ == "__main__" or not inspect.getsourcefile(type(sub)):
            raise ValueError(f"the repro script imports {type(sub).__name__} by reference, and a "
                             f"class defined in __main__ (a script run directly, a notebook) "
                             f"cannot be imported: move it into a module")
        args = self._inputs.get(f.path, ())
        pt, npz = path + ".pt", path + ".npz"
        torch.save(sub, pt)
        np.savez(npz, **{f"arg{i}": a.detach().cpu().numpy() for i, a in enumerate(args)})
        src = inspect.getsourcefile(type(sub)) or ""
        with open(path, "w") as out:
            out.write(_REPRO.format(
                what=f"{f.attempt.exporter} exporter, opset {f.attempt.opset}", path=f.path,
                cls=type(sub).__name__, error=f.attempt.error, src_dir=os.path.dirname(src),
                module_name=type(sub).__module__, pt=os.path.abspath(pt),
                npz=os.path.abspath(npz), nargs=len(args), opset=f.attempt.opset,
                dynamo=", dynamo=True" if f.attempt.exporter == "dynamo"
                else ", dynamo=False" if _torch_bridge._has_dynamo() else ""))
        return path


def diagnose_export(module: torch.nn.Module, args: Any, *,
                    kwargs: Optional[Mapping[str, Any]] = None,
                    exporters: Sequence[str] = ("dynamo", "torchscript"),
                    opsets: Optional[Sequence[int]] = None) -> ExportDiagnosis:
    """Tries to export ``module`` called with ``args`` (a tensor or a tuple; ``kwargs`` too)
    with each exporter of ``exporters`` ("dynamo": torch.export-based, torch >= 2.5;
    "torchscript": tracing) at ascending ``opsets`` (default: those of 9, 11, 13-20 this torch
    knows), jumping to the opset an error says has its op, until one works; where an exporter
    fails, exports each submodule alone with the inputs it got in one eager run (forward
    pre-hooks) to name the smallest ones that fail, with the op, the source line, the error
    class and the fix. Nothing is written to disk (:meth:`ExportDiagnosis.repro` writes a
    script). Raises ValueError for an unknown exporter name; the module's own forward raising
    is a diagnosis (``eager_error``), not an exception."""
    unknown = [e for e in exporters if e not in ("dynamo", "torchscript")]
    if unknown:
        raise ValueError(f"unknown exporter {unknown[0]!r}: use 'dynamo' or 'torchscript'")
    t0 = time.perf_counter()
    call_args = tuple(args) if isinstance(args, (tuple, list)) else (args,)
    try:
        inputs, called = _capture_inputs(module, call_args, kwargs or {})
    except Exception as e:  # noqa: BLE001: the user's forward raising is the answer
        tb, last = e.__traceback__, None
        torch_dir = os.path.dirname(torch.__file__) + os.sep
        while tb is not None:  # the innermost frame of the user's code (not torch's, not ours)
            name = tb.tb_frame.f_code.co_filename
            if name != __file__ and not name.startswith(torch_dir):
                last = tb
            tb = tb.tb_next
        where = (f" at {os.path.basename(last.tb_frame.f_code.co_filename)}:{last.tb_lineno}"
                 if last else "")
        return ExportDiagnosis(False, [], {}, [], [], 0, time.perf_counter() - t0,
                               _torch_bridge._error_line(e) + where)
    inputs[""] = call_args
    tried = _opsets(opsets)
    attempts: List[ExportAttempt] = []
    failing: List[FailingModule] = []
    notes: List[str] = []
    count = [0]
    min_opset: Dict[str, Optional[int]] = {}
    for exporter in exporters:
        mine = _try_exporter(module, call_args, exporter, tried)
        count[0] += sum(a.outcome != "not available" for a in mine)
        attempts += mine
        ok = [a.opset for a in mine if a.outcome == "ok"]
        min_opset[exporter] = ok[0] if ok else None
        first_failure = next((a for a in mine if a.outcome == "failed"), None)
        if first_failure is not None:
            failing += _localize(module, inputs, called, first_failure, notes, count)
    notes += _baked_branches(module, attempts)
    available = [a for a in attempts if a.outcome != "not available"]
    first = {a.exporter: a for a in reversed(available)}
    ok_all = bool(first) and all(a.outcome == "ok" for a in first.values())
    return ExportDiagnosis(ok_all, attempts, min_opset, failing, notes, count[0],
                           time.perf_counter() - t0, "", module, inputs)
