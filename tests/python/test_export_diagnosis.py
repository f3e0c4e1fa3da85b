"""onnxdbg.torch.diagnose_export with the torch of this interpreter (Debian's 1.13 in make test;
torch 2.x in make test-torch2): the submodule, the op and the opset that works, several culprits
in one call, a baked Python branch named with its module and line, an eager failure reported as
such, and a repro script that fails the same way on its own."""

import os
import subprocess
import sys
import warnings

import pytest

torch = pytest.importorskip("torch")
ot = pytest.importorskip("onnxdbg.torch")


class Mask(torch.nn.Module):
    def forward(self, x):
        return torch.tril(x)


class Net(torch.nn.Module):
    def __init__(self, masks=1):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)
        self.mask = Mask()
        if masks > 1:
            self.head = torch.nn.Sequential(torch.nn.ReLU(), Mask())

    def forward(self, x):
        y = self.mask(self.lin(x))
        return self.head(y) if hasattr(self, "head") else y.relu()


class Branchy(torch.nn.Module):
    def forward(self, x):
        if x.sum() > 0:  # a Python branch on a tensor's value
            return x * 2
        return x - 1


class Outer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = Branchy()

    def forward(self, x):
        return self.inner(x) + 1


class Broken(torch.nn.Module):
    def forward(self, x):
        return x @ torch.ones(3, 3)


def diagnose(module, x, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ot.diagnose_export(module.eval(), x, exporters=("torchscript",), **kw)


def test_names_the_submodule_the_op_and_the_opset_that_works():
    d = diagnose(Net(), torch.randn(4, 4))
    assert d.min_opset == {"torchscript": 14}
    assert not d.ok
    [f] = d.failing_modules
    assert (f.path, f.type, f.attempt.op, f.attempt.needs_opset) == ("mask", "Mask", "aten::tril", 14)
    assert f.source.startswith("test_export_diagnosis.py:")
    assert "opset_version=14" in f.fix
    # opset 9 fails naming 14, 14 works: two attempts, not one per opset in between
    assert [(a.opset, a.outcome) for a in d.attempts] == [(9, "failed"), (14, "ok")]
    # 'lin' never calls tril in the eager run, so it is not exported alone: 2 + 1 exports.
    assert d.exports == 3
    text = str(d)
    assert "'mask' (Mask)" in text and "exports from opset 14" in text
    assert d.to_json()["failing_modules"][0]["attempt"]["op"] == "aten::tril"


def test_two_failing_submodules_are_both_named_in_one_call():
    d = diagnose(Net(masks=2), torch.randn(4, 4))
    assert sorted(f.path for f in d.failing_modules) == ["head.1", "mask"]


def test_a_baked_python_branch_is_named_with_its_module_and_line():
    d = diagnose(Outer(), torch.randn(2, 2))
    assert d.ok and d.min_opset == {"torchscript": 9}
    [note] = d.notes
    assert "submodule 'inner' (Branchy)" in note
    assert "test_export_diagnosis.py:" in note and "keeps the branch" in note


def test_an_eager_failure_is_reported_as_such():
    d = diagnose(Broken(), torch.randn(2, 2))
    assert not d.ok and d.exports == 0
    assert d.eager_error.startswith("RuntimeError") and "test_export_diagnosis.py:" in d.eager_error
    assert "own forward raises" in str(d)


def test_a_module_that_exports_says_so():
    d = diagnose(torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.ReLU()), torch.randn(1, 3))
    assert d.ok and not d.failing_modules and d.min_opset == {"torchscript": 9}


def test_unknown_exporter_is_a_value_error():
    with pytest.raises(ValueError, match="unknown exporter"):
        ot.diagnose_export(Net(), torch.randn(4, 4), exporters=("onnxscript",))


def test_the_repro_script_fails_the_same_way_on_its_own(tmp_path):
    d = diagnose(Net(), torch.randn(4, 4))
    script = d.repro(str(tmp_path / "repro.py"))
    assert len(open(script).read().splitlines()) <= 50
    here = os.path.dirname(os.path.abspath(__file__))
    # the test module defines Mask (and imports onnxdbg): both importable from anywhere
    path = [here] + [os.path.abspath(p) for p in os.environ.get("PYTHONPATH", "").split(os.pathsep)
                     if p]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(path))
    r = subprocess.run([sys.executable, script], capture_output=True, text=True, cwd=tmp_path,
                       env=env, timeout=300)
    assert r.returncode != 0
    assert "UnsupportedOperatorError" in r.stderr and "aten::tril" in r.stderr


def test_the_dynamo_exporter_names_a_data_dependent_branch():
    if not ot._has_dynamo():
        pytest.skip(f"torch {torch.__version__} has no dynamo exporter (make test-torch2)")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        d = ot.diagnose_export(Outer().eval(), torch.randn(2, 2), exporters=("dynamo",))
    assert d.min_opset == {"dynamo": None}, str(d)
    assert d.attempts[0].error_class == "data-dependent control flow", str(d)
    assert [f.path for f in d.failing_modules] == ["inner"], str(d)
    assert "torch.cond" in d.failing_modules[0].fix
