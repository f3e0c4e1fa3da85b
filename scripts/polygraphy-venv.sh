#!/usr/bin/env bash
# polygraphy-venv.sh BUILD: makes (once) and prints BUILD/polygraphy-venv, a venv of the default
# python3 with PyPI's polygraphy, onnx_graphsurgeon (which `polygraphy debug reduce` imports),
# numpy, onnx and onnxruntime (a download, so its users run apart from `make test`:
# scripts/test-polygraphy.sh, bench/reduce_polygraphy.sh).
set -euo pipefail
venv="$(cd "$1" && pwd)/polygraphy-venv"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv" >&2
"$venv/bin/pip" install -q polygraphy onnx_graphsurgeon numpy onnx onnxruntime >&2
echo "$venv"
