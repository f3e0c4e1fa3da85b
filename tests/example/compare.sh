#!/usr/bin/env bash
# The public API as a user meets it: install onnxdbg (cmake --install), build examples/compare.cpp
# against it with find_package(onnxdbg), and run it on the demo model, whose Softmax the
# reference and ONNX Runtime compute alike.
# Usage: compare.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1 src=$2
work=$(mktemp -d "${TMPDIR:-/tmp}/onnxdbg-example-XXXXXX")
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" >/dev/null
rm -f "$build/install_manifest.txt"  # cmake --install's list of what it wrote
# The installed headers are the public ones (include/onnxdbg/) and nothing of src/.
installed=$(cd "$work/prefix/include/onnxdbg" && find . -type f | sed 's|^\./||' | sort)
public=$(cd "$src/include/onnxdbg" && find . -type f | sed 's|^\./||' | sort)
if [ "$installed" != "$public" ]; then
  echo "FAIL: the installed headers are not include/onnxdbg's:" >&2
  diff <(echo "$public") <(echo "$installed") >&2 || true
  exit 1
fi
cmake -S "$src/examples" -B "$work/build" -DCMAKE_PREFIX_PATH="$work/prefix" \
  -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$work/build" >/dev/null
"$build/make-demo-model" "$work/demo.onnx"
# The installed worker runs ONNX Runtime (not the one in the build folder).
out=$(ONNXDBG_WORKER="$work/prefix/bin/onnxdbg-worker" "$work/build/compare" "$work/demo.onnx")
echo "$out"
case "$out" in
  "agree: "*) ;;
  *) echo "FAIL: expected the verdict 'agree' from examples/compare" >&2; exit 1 ;;
esac
# A model that does not exist is one sentence and exit status 2.
set +e
err=$("$work/build/compare" "$work/missing.onnx" 2>&1); rc=$?
set -e
[ "$rc" -eq 2 ] || { echo "FAIL: exit status $rc for a missing model, expected 2" >&2; exit 1; }
case "$err" in
  *missing.onnx*) ;;
  *) echo "FAIL: the error does not name the file: $err" >&2; exit 1 ;;
esac
echo "example: ok"
