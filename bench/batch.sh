#!/usr/bin/env bash
# bench/batch.sh BUILD: `onnxdbg batch` overhead (issue 38). 50 jobs (`run --layerwise` of 50
# generated models, tests/ray/make_models.py) with the local executor (-j 2) and with the Ray
# executor on a two-node Ray cluster on 127.0.0.1 (tests/ray/cluster.sh; Ray from PyPI in
# BUILD/ray-venv); then the same local batch again with nothing changed. Prints the wall times and
# the ratios the issue targets: ray / local <= 1.5, second run / first <= 0.05.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "${1:-$ROOT/build}" && pwd)
bin="$BUILD/onnxdbg"
venv=$(bash "$ROOT/scripts/ray-venv.sh" "$BUILD")
work=$(mktemp -d)
source "$ROOT/tests/ray/cluster.sh"
ray_cluster_start "$venv"
trap 'ray_cluster_stop; rm -rf "$work"' EXIT
/usr/bin/python3 "$ROOT/tests/ray/make_models.py" "$work/models" 50
now() { date +%s.%N; }
t0=$(now)
"$bin" batch "$work/models" -c "run --layerwise" -o "$work/local" -j 2 >/dev/null 2>&1
t1=$(now)
"$bin" batch "$work/models" -c "run --layerwise" -o "$work/local" -j 2 >/dev/null 2>&1
t2=$(now)
ONNXDBG_PYTHON="$venv/bin/python" "$bin" batch "$work/models" -c "run --layerwise" -o "$work/ray" \
  --executor ray --address "127.0.0.1:$RAY_PORT" >"$work/ray.txt" 2>&1
[ $? -le 1 ] || { echo "bench/batch.sh: the Ray batch failed:"; tail -3 "$work/ray.txt"; exit 1; }
t3=$(now)
/usr/bin/python3 - "$t0" "$t1" "$t2" "$t3" <<'PY'
import sys
t0, t1, t2, t3 = map(float, sys.argv[1:])
local, again, ray = t1 - t0, t2 - t1, t3 - t2
print(f"batch of 50 jobs: local -j 2 {local:.2f} s, ray (2 nodes, 3 CPUs) {ray:.2f} s: "
      f"ray/local {ray / local:.2f} (target <= 1.5)")
print(f"batch again, nothing changed: {again:.3f} s: {again / local:.3f} of the first (target <= 0.05)")
PY
