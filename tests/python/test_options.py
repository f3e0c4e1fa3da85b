"""The option schema (include/onnxdbg/options.def) against both front-ends: every flag of
``onnxdbg run --help`` and ``onnxdbg reduce --help`` is a row of the schema or a flag the CLI
alone has (listed here with why), and every row with a Python keyword is a keyword-only argument
of ``onnxdbg.compare`` / ``onnxdbg.reduce`` with the schema's default, which the binding accepts.
Adding an option to a group without its Python keyword, or with another default, fails here."""

import inspect
import re
import subprocess

import pytest

import onnxdbg
from onnxdbg import _core

# The groups each Python function takes, as `onnxdbg run` and `onnxdbg reduce` do.
COMPARE_GROUPS = {"inputs", "comparison", "backends", "limits", "layerwise", "run"}
REDUCE_GROUPS = {"inputs", "comparison", "backends", "limits", "reduce"}
BATCH_GROUPS = {"batch"}

# Flags a command has that are not options of the shared schema, and why.
CLI_ONLY = {
    "--help", "-h",  # CLI11's
    "--json", "--html",  # renderings: Python has to_json() and write_html()
    # reduce: the --check subprocess oracle (Python passes a callable instead), its files, and
    # the reduction's own files and replay, which Python's ReducedModel handles
    "--check", "--iter-artifact", "--iter-inputs", "--fail-code", "--ignore-fail-code",
    "--check-timeout", "--timeout-means", "--output", "-o", "--artifacts", "--min-good",
    "--journal", "--resume", "--force-fallback-shape-inference", "-j",
    "--input-shapes",  # reduce: another name of --model-input-shapes
    "--executor", "--address",  # reduce: where --check commands run (Python passes a callable)
}

# batch's own: the models and commands (positional in Python), the report folder (report_dir=),
# --resume (the default; Python has rerun=False).
CLI_ONLY_BATCH = {"--command", "-c", "--resume"}

# Options a command has although they belong to a shared group, with no Python keyword there.
NOT_IN_COMMAND = {
    "reduce": {"--sample", "--validate", "--load-outputs", "--input-shapes", "--golden-names",
               "--golden-layout"},
}


def schema() -> list:
    return _core.option_schema()


def cli_flags(cli: str, command: str) -> set:
    """Every flag `onnxdbg COMMAND --help` lists ("-o,--output" gives both)."""
    out = subprocess.run([cli, command, "--help"], capture_output=True, text=True, check=True)
    flags = set()
    for short, long in re.findall(r"^  (-\w,)?(--[\w-]+)", out.stdout, re.M):
        flags.add(long)
        if short:
            flags.add(short.rstrip(","))
    return flags


@pytest.mark.parametrize("command,groups", [("run", COMPARE_GROUPS), ("reduce", REDUCE_GROUPS),
                                            ("batch", BATCH_GROUPS)])
def test_every_cli_flag_is_in_the_schema(cli, command, groups):
    rows = {r["cli"]: r for r in schema() if r["group"] in groups}
    flags = cli_flags(cli, command)
    unknown = sorted(f for f in flags if f not in rows and f not in CLI_ONLY | CLI_ONLY_BATCH)
    assert not unknown, f"`onnxdbg {command}` flags missing from options.def: {unknown}"
    # and every option of the command's groups is a flag of the command
    missing = sorted(r["cli"] for r in schema() if r["group"] in groups and r["cli"] not in flags
                     and r["cli"] not in NOT_IN_COMMAND.get(command, set()))
    assert not missing, f"options.def options `onnxdbg {command}` lacks: {missing}"


@pytest.mark.parametrize("function,groups,keywords", [
    (onnxdbg.compare, COMPARE_GROUPS, _core.compare_keywords),
    (onnxdbg.reduce, REDUCE_GROUPS, _core.reduce_keywords),
    (onnxdbg.batch, BATCH_GROUPS, _core.batch_keywords),
])
def test_every_option_is_a_python_keyword_with_the_same_default(function, groups, keywords):
    params = inspect.signature(function).parameters
    bound = set(keywords())
    checked = 0
    for row in schema():
        if row["group"] not in groups or not row["python"]:
            continue
        if function is onnxdbg.reduce and row["cli"] in NOT_IN_COMMAND["reduce"]:
            continue
        name = row["python"]
        assert name in params, f"{function.__name__}() lacks keyword {name} ({row['cli']})"
        assert params[name].kind == inspect.Parameter.KEYWORD_ONLY, name
        assert params[name].default == onnxdbg._schema_default(row), (
            f"{function.__name__}({name}=...) defaults to {params[name].default!r}, "
            f"options.def says {onnxdbg._schema_default(row)!r} ({row['cli']})")
        assert name in bound, f"the binding of {function.__name__}() does not take {name}"
        checked += 1
    assert checked >= (7 if function is onnxdbg.batch else 10)


def test_schema_rows_are_complete():
    rows = schema()
    ids = [r["id"] for r in rows]
    assert len(ids) == len(set(ids))
    for r in rows:
        assert r["cli"].startswith("--") and r["help"], r
    # the defaults as the CLI prints them
    by_id = {r["id"]: r for r in rows}
    assert by_id["atol"]["default"] == "1e-05"
    assert by_id["backends"]["default"] == "reference,onnxruntime"
    assert by_id["layerwise_memory"]["default"] == "2GiB"
    # and as Python writes them (the defaults of the keywords above)
    python = {i: onnxdbg._schema_default(r) for i, r in by_id.items()}
    assert python["atol"] == 1e-05 and isinstance(python["atol"], float)
    assert python["seed"] == 1 and python["validate"] is False
    assert python["backends"] == ("reference", "onnxruntime")
    assert python["layerwise_memory"] == "2GiB"
    assert python["save_repro"] is None and python["timeout"] is None  # python_default "None"
    assert python["load_inputs"] is None  # no default text
    assert python["fail_regex"] == ()


def test_an_unknown_keyword_of_the_binding_is_a_usage_error(tmp_path):
    with pytest.raises(onnxdbg.UsageError, match="no_such_option"):
        _core.compare("unused.onnx", {"no_such_option": 1}, None)
