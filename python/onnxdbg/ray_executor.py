"""The Ray executor of ``onnxdbg batch --executor ray``: runs the batch's jobs as Ray tasks.

``onnxdbg batch`` (api::batch, src/batch/executor.cpp) starts this script with the Python given
by ``$ONNXDBG_PYTHON`` (default ``python3``) and speaks JSON lines with it:

- this script first prints ``{"ready": true, "nodes": N, "cpus": C}`` once it reached the cluster,
  or ``{"fatal": "<one sentence>"}`` and exits 2 (Ray missing, no cluster at the address);
- each line on its stdin is a job: ``{"id", "argv", "model_arg", "staging", "timeout",
  "max_memory", "ship_model", "ship_files", "env", "cwd"}``; argv[0] (the onnxdbg executable, or
  reduce's check command) must exist at the same path, or on the PATH, of every node; every
  path in argv and env under ``staging`` is rewritten to the task's own folder on the node,
  where the ``ship_files`` (names relative to ``staging``) are written first;
- each line it prints is an outcome: ``{"id", "exit", "signal", "timed_out", "seconds", "lost"}``,
  printed after the files the job wrote (its stdout.json, stderr.txt, page.html, ...) were
  written into its ``staging`` folder here.

A job is one Ray task (``num_cpus=1``, ``memory=max_memory`` when given, ``max_retries`` =
``--retries``, so a task whose worker process or node dies runs again elsewhere). The model goes
with the task as bytes when ``ship_model`` (no external data, at most 512 MiB); otherwise the
nodes read it from its path, which they must share. The task runs onnxdbg in a temporary folder,
in a session of its own, with its data size limited to ``max_memory`` (RLIMIT_DATA) and killed at
``timeout`` seconds, and returns its files' bytes.

Only the standard library and ``ray`` are imported: the script runs without onnxdbg's extension.
"""
from __future__ import annotations

import argparse
import json
import os
import queue
import signal
import socket
import sys
import threading
import time
from typing import Any, Dict, List, Optional, Tuple


def emit(obj: Dict[str, Any]) -> None:
    """Prints one JSON line for onnxdbg batch on stdout."""
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def fatal(message: str) -> None:
    """Says why the executor cannot run, in one sentence, and exits with status 2."""
    emit({"fatal": message})
    sys.exit(2)


def check_reachable(address: str) -> None:
    """Fails fatally unless something listens at ``address`` (HOST:PORT or ray://HOST:PORT)."""
    hostport = address.split("://", 1)[-1]
    host, _, port = hostport.rpartition(":")
    if not host or not port.isdigit():
        fatal(f"--address {address}: give HOST:PORT of the Ray cluster's head (as `ray start "
              f"--head` prints it)")
    try:
        with socket.create_connection((host, int(port)), timeout=5):
            pass
    except OSError as e:
        fatal(f"no Ray cluster answers at {address} ({e.strerror or e}); start one with `ray start "
              f"--head --port {port}` or give the address of a running one")


def _prepare(job: Dict[str, Any], tmp: str, model: Optional[bytes],
             shipped: Optional[Dict[str, bytes]]) -> Tuple[List[str], Dict[str, str]]:
    """The job's argv and environment in the task's folder ``tmp``, its files written there."""
    argv = [a.replace(job["staging"], tmp) for a in job["argv"]]
    env = dict(os.environ)
    for entry in job.get("env") or []:
        name, _, value = entry.partition("=")
        env[name] = value.replace(job["staging"], tmp)
    for name, data in (shipped or {}).items():
        path = os.path.realpath(os.path.join(tmp, name))
        if path.startswith(os.path.realpath(tmp) + os.sep):
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "wb") as f:
                f.write(data)
    if model is not None:
        os.mkdir(os.path.join(tmp, ".model"))
        path = os.path.join(tmp, ".model", os.path.basename(argv[job["model_arg"]]))
        with open(path, "wb") as f:
            f.write(model)
        argv[job["model_arg"]] = path
    return argv, env


def _execute(argv: List[str], env: Dict[str, str], cwd: str, tmp: str, timeout: float,
             limit: int) -> Tuple[int, bool]:
    """Runs argv in a session of its own, its stdout and stderr in ``tmp``; kills it (and what
    it started) after ``timeout`` seconds (0: never). Returns (returncode, timed_out)."""
    import ctypes
    import resource
    import subprocess

    def child_setup() -> None:
        # The job dies with its Ray worker (no orphan runs on after a retry started), and
        # allocates at most `limit` bytes.
        try:
            ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass
        if limit > 0:
            resource.setrlimit(resource.RLIMIT_DATA, (limit, limit))

    timed_out = False
    with open(os.path.join(tmp, "stdout.json"), "wb") as out, \
            open(os.path.join(tmp, "stderr.txt"), "wb") as err:
        p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=err, cwd=cwd,
                             env=env, start_new_session=True, preexec_fn=child_setup)
        try:
            p.wait(timeout=timeout or None)
        except subprocess.TimeoutExpired:
            timed_out = True
            os.killpg(p.pid, signal.SIGTERM)
            try:
                p.wait(timeout=2)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
    try:
        os.killpg(p.pid, signal.SIGKILL)  # a worker it started and left behind
    except OSError:
        pass
    return p.returncode, timed_out


def _collect(job: Dict[str, Any], tmp: str, argv: List[str], shipped_model: bool) -> Dict[str, bytes]:
    """The files the job made in ``tmp``; paths in its output name where onnxdbg batch puts
    them, and the model's own path."""
    renames = [(tmp.encode(), job["staging"].encode())]
    if shipped_model:
        renames.insert(0, (argv[job["model_arg"]].encode(),
                           job["argv"][job["model_arg"]].encode()))
    files = {}
    for root, dirs, names in os.walk(tmp):
        dirs[:] = [d for d in dirs if d != ".model"]
        for n in names:
            full = os.path.join(root, n)
            if os.path.relpath(full, tmp) in (job.get("ship_files") or []):
                continue  # sent, not made
            with open(full, "rb") as f:
                data = f.read()
            if n in ("stdout.json", "stderr.txt"):
                for old, new in renames:
                    data = data.replace(old, new)
            files[os.path.relpath(full, tmp)] = data
    return files


def run_job(job: Dict[str, Any], model: Optional[bytes],
            shipped: Optional[Dict[str, bytes]] = None) -> Dict[str, Any]:
    """Runs one job on this node (a Ray task); returns its outcome and the bytes of its files.

    ``job`` is a line of onnxdbg batch; ``model`` the model's bytes, or None to read its path;
    ``shipped`` the files of its folder it reads (reduce's candidate), by name. The outcome's
    ``files`` maps paths relative to the job's folder to their bytes. Errors: none raised; a
    program missing on this node is an outcome with ``exit`` -2 and ``lost`` saying so.
    """
    import shutil
    import tempfile

    tmp = tempfile.mkdtemp(prefix="onnxdbg-ray-")
    try:
        argv, env = _prepare(job, tmp, model, shipped)
        if shutil.which(argv[0], path=env.get("PATH")) is None:
            return {"exit": -2,
                    "lost": f"{argv[0]} is not there to run on node {socket.gethostname()}"}
        cwd = job.get("cwd") if os.path.isdir(job.get("cwd") or "") else tmp
        start = time.monotonic()
        rc, timed_out = _execute(argv, env, cwd, tmp, float(job.get("timeout") or 0),
                                 int(job.get("max_memory") or 0))
        return {"exit": rc if rc >= 0 and not timed_out else -1,
                "signal": -rc if rc < 0 and not timed_out else 0, "timed_out": timed_out,
                "seconds": time.monotonic() - start,
                "files": _collect(job, tmp, argv, model is not None)}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def write_files(staging: str, files: Dict[str, bytes]) -> None:
    """Writes a job's files into its staging folder, refusing paths that leave it."""
    root = os.path.realpath(staging)
    for rel, data in files.items():
        path = os.path.realpath(os.path.join(root, rel))
        if not path.startswith(root + os.sep):
            continue
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)


def read_jobs(jobs: "queue.Queue[Optional[Dict[str, Any]]]") -> None:
    """Puts each job line of stdin on ``jobs``; None at the end of stdin."""
    for line in sys.stdin:
        if line.strip():
            jobs.put(json.loads(line))
    jobs.put(None)


def lost_cause(e: BaseException, retries: int) -> str:
    """A sentence for a task Ray gave up on."""
    runs = retries + 1
    return (f"its Ray worker or node died ({type(e).__name__}) {runs} time{'s' if runs > 1 else ''}: "
            f"{str(e).splitlines()[0] if str(e) else ''}").rstrip(": ")


def main() -> None:
    """Reaches the cluster, then runs every job stdin gives until stdin ends and all are done."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--address", required=True)
    ap.add_argument("--retries", type=int, default=1)
    args = ap.parse_args()
    try:
        import ray
    except ImportError:
        fatal(f"--executor ray needs Ray, which {sys.executable} cannot import: pip install ray "
              f"(or pip install onnxdbg[ray])")
    check_reachable(args.address)
    try:
        ray.init(address=args.address, logging_level="ERROR", log_to_driver=False)
    except Exception as e:  # noqa: BLE001 - any failure to connect is the one sentence
        fatal(f"cannot connect to the Ray cluster at {args.address}: {str(e).splitlines()[0]}")
    nodes = [n for n in ray.nodes() if n.get("Alive")]
    emit({"ready": True, "nodes": len(nodes),
          "cpus": int(ray.cluster_resources().get("CPU", 0))})
    remote = ray.remote(num_cpus=1, max_retries=args.retries, retry_exceptions=False)(run_job)
    pending: Dict[Any, Dict[str, Any]] = {}
    signal.signal(signal.SIGTERM, lambda *_: (
        [ray.cancel(r, force=True) for r in list(pending)], os._exit(0)))
    jobs: "queue.Queue[Optional[Dict[str, Any]]]" = queue.Queue()
    threading.Thread(target=read_jobs, args=(jobs,), daemon=True).start()
    more = True
    while more or pending:
        while more:
            try:  # every job that came, waiting for one only when no task is out
                job = jobs.get_nowait() if pending else jobs.get()
            except queue.Empty:
                break
            if job is None:
                more = False
                break
            model = None
            if job.get("ship_model"):
                try:
                    with open(job["argv"][job["model_arg"]], "rb") as f:
                        model = ray.put(f.read())
                except OSError:
                    model = None  # the job reads the path and says why it cannot
            shipped = {}
            for name in job.get("ship_files") or []:
                try:
                    with open(os.path.join(job["staging"], name), "rb") as f:
                        shipped[name] = f.read()
                except OSError:
                    pass  # the job says what it misses
            opts = {"memory": int(job["max_memory"])} if job.get("max_memory") else {}
            pending[remote.options(**opts).remote(job, model, shipped)] = job
        if not pending:
            continue
        ready, _ = ray.wait(list(pending), num_returns=1, timeout=0.02)
        for ref in ready:
            job = pending.pop(ref)
            try:
                r = ray.get(ref)
            except Exception as e:  # noqa: BLE001 - WorkerCrashedError, NodeDiedError, ...
                r = {"lost": lost_cause(e, args.retries)}
            write_files(job["staging"], r.pop("files", {}))
            emit({"id": job["id"], "exit": r.get("exit", -1), "signal": r.get("signal", 0),
                  "timed_out": r.get("timed_out", False), "seconds": r.get("seconds", 0.0),
                  "lost": r.get("lost", "")})


if __name__ == "__main__":
    main()
