"""``python -m onnxdbg`` and the ``onnxdbg`` console command of the installed package: run the
CLI (``onnxdbg/bin/onnxdbg`` in a wheel, or the build tree's) with the given arguments, the worker
beside it. Every command of the README works the same after ``pip install``."""
import os
import sys


def executable() -> str:
    """The onnxdbg CLI this package runs: the wheel's ``onnxdbg/bin/onnxdbg``, else
    ``$ONNXDBG_CLI``, else the one of the build tree the package was built in. Raises
    FileNotFoundError naming where it looked."""
    here = os.path.dirname(os.path.abspath(__file__))
    bundled = os.path.join(here, "bin", "onnxdbg")
    if os.access(bundled, os.X_OK):
        return bundled
    env = os.environ.get("ONNXDBG_CLI")
    if env and os.access(env, os.X_OK):
        return env
    built = os.path.join(os.environ.get("ONNXDBG_BINARY_DIR", os.path.dirname(os.path.dirname(here))),
                         "onnxdbg")
    if os.access(built, os.X_OK):
        return built
    raise FileNotFoundError(f"no onnxdbg executable at {bundled}, $ONNXDBG_CLI or {built}; "
                            f"reinstall the onnxdbg wheel or set ONNXDBG_CLI")


def main() -> None:
    """Replaces this process with the CLI (exit status and signals are the CLI's own)."""
    try:
        exe = executable()
    except FileNotFoundError as e:
        sys.stderr.write(f"onnxdbg: error: {e}\n")
        sys.exit(2)
    worker = os.path.join(os.path.dirname(exe), "onnxdbg-worker")
    if os.access(worker, os.X_OK):
        os.environ.setdefault("ONNXDBG_WORKER", worker)
    os.execv(exe, [exe] + sys.argv[1:])


if __name__ == "__main__":
    main()
