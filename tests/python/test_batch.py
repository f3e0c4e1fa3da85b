"""onnxdbg.batch: the Python front-end of ``onnxdbg batch`` (local executor): the jobs' rows,
the cache that a second call reuses, per-model options from a list file, errors as rows or as
exceptions, and the same summary as the CLI's for the same batch."""

import json
import os
import subprocess

import pytest

import onnxdbg


@pytest.fixture
def env_cli(cli, monkeypatch):
    """The build's onnxdbg as the executable the jobs run."""
    monkeypatch.setenv("ONNXDBG_CLI", os.path.abspath(cli))
    return cli


def test_batch_runs_every_model_and_command(env_cli, mlp, tmp_path):
    path, _, _ = mlp
    garbage = tmp_path / "garbage.onnx"
    garbage.write_bytes(b"\x00not a model" * 50)
    listing = tmp_path / "models.txt"
    listing.write_text(f"{path} --input-shapes x:2x4\n{garbage}\n")
    report = tmp_path / "report"
    r = onnxdbg.batch([listing], ["run", "lint"], report_dir=report, jobs=2, timeout=120,
                      progress=False)
    rows = {(os.path.basename(j["model"]), j["command"]): j for j in r.jobs}
    assert set(rows) == {("mlp.onnx", "run"), ("mlp.onnx", "lint"), ("garbage.onnx", "run"),
                         ("garbage.onnx", "lint")}
    assert rows[("mlp.onnx", "run")]["status"] == "pass"
    assert "agree" in rows[("mlp.onnx", "run")]["line"]
    assert rows[("mlp.onnx", "run")]["details"]["verdict"] == "agree"
    assert rows[("garbage.onnx", "lint")]["status"] == "error"
    assert "not a valid ONNX model" in rows[("garbage.onnx", "lint")]["line"]
    assert r.counts["pass"] >= 2 and r.counts["error"] == 2
    assert (report / "summary.json").is_file() and (report / "index.html").is_file()
    assert json.loads((report / "summary.json").read_text())["counts"] == r.counts
    page = rows[("mlp.onnx", "run")]["page"]
    assert page and (report / page).is_file()
    assert "batch: 4 jobs on 2 models" in str(r)

    # Again with the same options: everything comes from the cache (the malformed model's
    # error is an answer too); another timeout is another job; rerun=True runs it all.
    again = onnxdbg.batch([listing], ["run", "lint"], report_dir=report, timeout=120,
                          progress=False)
    assert [j["cached"] for j in again.jobs] == [True] * 4
    assert again.to_json()["ran"] == 0
    assert [j["status"] for j in again.jobs] == [j["status"] for j in r.jobs]
    other = onnxdbg.batch([path], ["lint"], report_dir=report, timeout=60, progress=False)
    assert other.to_json()["ran"] == 1
    forced = onnxdbg.batch([path], ["lint"], report_dir=report, timeout=60, rerun=True,
                           progress=False)
    assert forced.to_json()["ran"] == 1


def test_batch_usage_errors_raise(env_cli, mlp, tmp_path):
    path, _, _ = mlp
    with pytest.raises(onnxdbg.UsageError, match="batch runs run, lint"):
        onnxdbg.batch([path], ["diff"], report_dir=tmp_path / "r", progress=False)
    with pytest.raises(onnxdbg.UsageError, match="--json"):
        onnxdbg.batch([path], ["run --json"], report_dir=tmp_path / "r", progress=False)
    with pytest.raises(onnxdbg.UsageError, match="address"):
        onnxdbg.batch([path], ["lint"], report_dir=tmp_path / "r", executor="ray",
                      progress=False)
    with pytest.raises(onnxdbg.UsageError, match="unexpected keyword"):
        onnxdbg._core.batch([path], ["lint"], str(tmp_path / "r"), {"no_such": 1}, None)


def test_batch_same_report_as_the_cli(env_cli, cli, models_dir, tmp_path):
    models = [os.path.join(models_dir, "hey_jarvis_v0.1.onnx"),
              os.path.join(models_dir, "ch_ppocr_mobile_v2.0_cls_infer.onnx")]
    listing = tmp_path / "models.txt"
    listing.write_text(f"{models[0]}\n{models[1]} --input-shapes x:1x3x48x192\n")
    py = onnxdbg.batch([listing], ["run --layerwise"], report_dir=tmp_path / "py",
                       progress=False)
    subprocess.run([cli, "batch", str(listing), "-c", "run --layerwise", "-o",
                    str(tmp_path / "cli"), "--json"], capture_output=True, check=False)
    cli_summary = json.loads((tmp_path / "cli" / "summary.json").read_text())

    def verdicts(jobs):
        return [(j["model"], j["status"], json.dumps(j["details"], sort_keys=True))
                for j in jobs]

    assert verdicts(py.jobs) == verdicts(cli_summary["jobs"])
    assert py.fleet["op_types"] == cli_summary["fleet"]["op_types"]
