#!/usr/bin/env bash
# test-torch2.sh BUILD: the PyTorch bridge's tests (tests/python/test_torch.py and
# test_export_diagnosis.py) with PyTorch 2.x from PyPI (its dynamo exporter, opset 18+, node
# metadata) instead of Debian's torch 1.13. PyPI's
# torch is a multi-GB CUDA build, so this runs apart from `make test` (`make test-torch2`), in a
# venv of the default python3 kept in BUILD/torch2-venv, with the package of BUILD/python.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "${1:-$ROOT/build}" && pwd)
venv="$BUILD/torch2-venv"
py=python3
[ -x "$venv/bin/python" ] || "$py" -m venv "$venv"
"$venv/bin/pip" install -q "torch>=2.1" torchvision onnx onnxscript numpy pytest
"$venv/bin/python" -c 'import torch, onnx; print("test-torch2: torch", torch.__version__, "onnx", onnx.__version__)'
PYTHONPATH="$BUILD/python" ONNXDBG_MODELS="$ROOT/third_party/models" ONNXDBG_BINARY_DIR="$BUILD" \
  bash "$ROOT/tests/python/run.sh" "$venv/bin/python" -k "torch or export_diagnosis" "$@"
