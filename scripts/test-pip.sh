#!/usr/bin/env bash
# test-pip.sh: installs the package as Python users do (`python3 -m venv --system-site-packages
# V && V/bin/pip install .`, pyproject.toml + scikit-build-core) for Debian's /usr/bin/python3 and
# for the machine's default python3, then, outside the checkout, loads the shipped demo model,
# runs it on the reference and ONNX Runtime (the packaged worker) and compares them. `make
# test-pip` runs it; it builds the extension once per Python (slow: not part of `make test`).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$ROOT/build/make-demo-model" "$work/demo.onnx" 2>/dev/null || {
  cmake --build "$ROOT/build" --target make-demo-model >/dev/null
  "$ROOT/build/make-demo-model" "$work/demo.onnx"
}
# ccache, where installed, shares the objects `make` compiled (same flags, paths made relative).
if command -v ccache >/dev/null; then
  export CMAKE_CXX_COMPILER_LAUNCHER=ccache CCACHE_BASEDIR=${CCACHE_BASEDIR:-$(dirname "$ROOT")}
fi
i=0
for py in /usr/bin/python3 python3; do
  i=$((i + 1))
  command -v "$py" >/dev/null || { echo "test-pip: $py not found, skipped"; continue; }
  echo "test-pip: $py ($("$py" --version 2>&1))"
  "$py" -m venv --system-site-packages "$work/venv$i"
  (cd "$ROOT" && "$work/venv$i/bin/pip" install -q \
    --config-settings=build-dir=build-pip-test .)
  (cd "$work" && env -u ONNXDBG_WORKER "$work/venv$i/bin/python" - <<'PY'
import onnxdbg
m = onnxdbg.load("demo.onnx")
print(m)
r = onnxdbg.compare(m, backends=("reference", "onnxruntime"), progress=False)
print(str(r).splitlines()[-1])
assert r.agree, str(r)
assert onnxdbg.__file__.startswith(__import__("sys").prefix), onnxdbg.__file__
PY
  )
done
echo "test-pip: ok"
