#!/usr/bin/env bash
# test-ray.sh BUILD: `onnxdbg batch --executor ray` against a real two-node Ray cluster on
# 127.0.0.1 (tests/ray/batch_ray.sh), with Ray from PyPI in BUILD/ray-venv (scripts/ray-venv.sh).
# Not in `make test`: Ray is a large download and starts a cluster.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "${1:-$ROOT/build}" && pwd)
venv=$(bash "$ROOT/scripts/ray-venv.sh" "$BUILD")
bash "$ROOT/tests/ray/batch_ray.sh" "$BUILD/onnxdbg" "$ROOT/third_party/models" "$venv"
