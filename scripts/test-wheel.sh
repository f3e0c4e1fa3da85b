#!/usr/bin/env bash
# test-wheel.sh: `make test-wheel`. The wheel of dist/ (make wheel) in fresh venvs without system
# site-packages, for Debian's /usr/bin/python3 and for the default python3: installed from the
# file with --no-index (numpy, pytest and onnx from a wheelhouse downloaded first), timed; then,
# from a folder outside the checkout, with LD_LIBRARY_PATH empty and the wheel's build folder
# moved away (nothing may resolve from the checkout): `onnxdbg --version`, the demo comparison
# through the console command, `python -m onnxdbg`, `onnxdbg view`, onnxdbg.compare and a Python
# reduce oracle, then the whole Python suite (tests/python) against the installed package.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "${BUILD:-$ROOT/build}" && pwd)
whl=$(ls "$ROOT"/dist/onnxdbg-*.whl 2>/dev/null | head -1)
[ -n "$whl" ] || { echo "test-wheel: no wheel in dist/ (make wheel)"; exit 1; }
work=$(mktemp -d)
away="$ROOT/build-wheel"
restore() { [ -d "$away.away" ] && mv "$away.away" "$away"; rm -rf "$work"; }
trap restore EXIT
[ -d "$away" ] && mv "$away" "$away.away"
"$BUILD/make-demo-model" "$work/demo.onnx"
cp -r "$ROOT/tests" "$work/tests"  # tests/python uses tests/cli's model scripts
python3 -m pip download -q -d "$work/wheelhouse" numpy pytest onnx
i=0
for py in /usr/bin/python3 python3; do
  i=$((i + 1))
  v="$work/venv$i"
  "$py" -m venv "$v"
  start=$(date +%s.%N)
  "$v/bin/pip" install -q --no-index --find-links "$work/wheelhouse" "$whl"
  echo "test-wheel: $py: pip install of the wheel took $(echo "$(date +%s.%N) - $start" | bc) s (target: 30 s)"
  "$v/bin/pip" install -q --no-index --find-links "$work/wheelhouse" pytest onnx
  (
    cd "$work"
    export LD_LIBRARY_PATH= PATH="$v/bin:/usr/bin:/bin"
    unset ONNXDBG_WORKER ONNXDBG_CLI PYTHONPATH
    onnxdbg --version
    onnxdbg run demo.onnx --backends reference,onnxruntime | tail -1
    python -m onnxdbg lint demo.onnx | tail -1
    onnxdbg view demo.onnx -o demo.html && [ -s demo.html ]
    python - <<'PY'
import sys
import onnxdbg
assert onnxdbg.__file__.startswith(sys.prefix), onnxdbg.__file__
r = onnxdbg.compare("demo.onnx", backends=("reference", "onnxruntime"), progress=False)
assert r.agree, str(r)
red = onnxdbg.reduce("demo.onnx", lambda model: b"Softmax" in model, progress=False)
print("compare:", str(r).splitlines()[-1], "| reduce with a Python oracle:", len(red.nodes), "node(s)")
# Every grafted library and bundled component has its license in the installed dist-info.
from importlib import metadata
from pathlib import Path
dist = metadata.distribution("onnxdbg")
lic = Path(dist.locate_file(f"onnxdbg-{dist.version}.dist-info/licenses"))
listed = (lic / "THIRD_PARTY.txt").read_text()
for f in dist.files:
    if str(f).startswith("onnxdbg.libs/"):
        assert str(f) in listed, f"{f} has no license in {lic}"
for line in listed.splitlines()[2:]:
    for name in line.rsplit("license: ", 1)[1].split(", "):
        assert (lic / name).is_file(), f"{lic / name} is missing"
print("licenses:", len(listed.splitlines()) - 2, "third-party components listed, every file present")
PY
    ONNXDBG_BINARY_DIR="$v/bin" ONNXDBG_MODELS="$ROOT/third_party/models" \
      python -m pytest -q -p no:cacheprovider tests/python
  )
done
echo "test-wheel: ok"
