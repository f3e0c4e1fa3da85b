#!/usr/bin/env bash
# ray-venv.sh BUILD: a venv of the default python3 in BUILD/ray-venv with Ray from PyPI (pinned),
# for `make test-ray` and bench/batch.sh; prints its path. Ray is 70+ MB with its dependencies,
# so `make test` does not install it.
set -euo pipefail
BUILD=$(cd "${1:-build}" && pwd)
venv="$BUILD/ray-venv"
RAY_VERSION=2.60.0
[ -x "$venv/bin/python" ] || python3 -m venv "$venv" >&2
"$venv/bin/python" -c "import ray, sys; sys.exit(ray.__version__ != '$RAY_VERSION')" 2>/dev/null ||
  "$venv/bin/pip" install -q "ray==$RAY_VERSION" >&2
echo "$venv"
