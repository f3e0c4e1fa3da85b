#!/usr/bin/env bash
# test-tf.sh BUILD: `make test-tf`. onnxdbg.tf (tests/python/test_tf*.py) with TensorFlow 2.21
# (tensorflow-cpu) and tf2onnx 1.17 from PyPI, pinned, in BUILD/tf-venv (a venv of the default
# python3), against the package of BUILD/python. Not in `make test`: TensorFlow is a large download.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "${1:-$ROOT/build}" && pwd)
venv="$BUILD/tf-venv"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/python" -c 'import tensorflow, tf2onnx' 2>/dev/null ||
  "$venv/bin/pip" install -q "tensorflow-cpu==2.21.0" "tf2onnx==1.17.0" onnx numpy pytest
PYTHONPATH="$BUILD/python" ONNXDBG_MODELS="$ROOT/third_party/models" ONNXDBG_BINARY_DIR="$BUILD" \
  TF_CPP_MIN_LOG_LEVEL=2 bash "$ROOT/tests/python/run.sh" "$venv/bin/python" -k "tf" "$@"
