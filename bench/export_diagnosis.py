"""bench/export_diagnosis.py (make bench, Debian's python3 with torch): what onnxdbg.torch's
diagnose_export costs against the failing exports it explains (issue 34's target: at most 3x the
failing exports themselves, one per failing op as a user finds them one export at a time, plus
one export per submodule level). The tril model of tests/python/test_export_diagnosis.py with one
and with two failing submodules (at one and two levels): the wall time of one failing
torch.onnx.export at opset 9 (the median of 5), of diagnose_export (the median of 3), the exports
it made, and its ratio to (3 x culprits + levels) failing exports."""
import io
import statistics
import sys
import time
import warnings

import torch

sys.path.insert(0, "tests/python")
import onnxdbg.torch as ot  # noqa: E402
from test_export_diagnosis import Net  # noqa: E402


def failing_export_seconds(model, x) -> float:
    times = []
    for _ in range(5):
        start = time.perf_counter()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                torch.onnx.export(model, (x,), io.BytesIO(), opset_version=9)
        except Exception:  # noqa: BLE001 - the failure is the point
            pass
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    for masks, levels in ((1, 1), (2, 2)):
        model, x = Net(masks).eval(), torch.randn(4, 4)
        fail = failing_export_seconds(model, x)
        runs = []
        for _ in range(3):
            start = time.perf_counter()
            d = ot.diagnose_export(model, (x,))
            runs.append(time.perf_counter() - start)
        took = statistics.median(runs)
        culprits = len(d.failing_modules)
        budget = (3 * culprits + levels) * fail
        print(f"diagnose_export, {culprits} failing submodule(s): {took * 1e3:.1f} ms, "
              f"{d.exports} exports; one failing export {fail * 1e3:.1f} ms; ratio to (3 x "
              f"{culprits} + {levels} levels) failing exports {took / budget:.2f} (target <= 1)")


if __name__ == "__main__":
    main()
