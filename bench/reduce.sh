#!/usr/bin/env bash
# bench/reduce.sh BUILD_DIR MODELS_DIR: `onnxdbg reduce` on the models of issue 5's Polygraphy
# figures (made by make-reduce-models, each with one Log node deep inside), with an external
# check in Polygraphy's cost class (python3 + onnx.load, bench/check_op_present.py) and with the
# built-in oracle (--fail-on nan on the reference), and on ch_PP-OCRv4_det_infer with a real
# OpenCV-vs-reference mismatch. Prints wall times and ratios against the recorded figures.
set -euo pipefail
build=$(cd "$1" && pwd) models=$(cd "$2" && pwd)
here=$(cd "$(dirname "$0")/.." && pwd)
py=/usr/bin/python3
if ! "$py" -c 'import onnx' 2>/dev/null; then
  echo "bench/reduce: python3-onnx is missing (scripts/install-deps.sh installs it)"; exit 1
fi
cmake --build "$build" --target onnxdbg make-reduce-models >/dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$build/make-reduce-models" "$work"
cd "$work"
now() { date +%s.%N; }
# name nodes polygraphy-bisect-seconds
printf '%-16s %6s %-8s %7s %6s %8s %9s %s\n' model nodes oracle checks left wall_s "vs_pg" "target"
run() {  # model oracle-label pg_seconds target_ratio_text args...
  local model=$1 label=$2 pg=$3 target=$4; shift 4
  local t0 t1 json
  t0=$(now)
  json=$("$build/onnxdbg" reduce "$model.onnx" -o "$model.reduced.onnx" --json "$@")
  t1=$(now)
  "$py" - "$model" "$label" "$pg" "$target" "$t0" "$t1" "$json" <<'PY'
import json, sys
model, label, pg, target, t0, t1, text = sys.argv[1:8]
r = json.loads(text)
wall = float(t1) - float(t0)
ratio = float(pg) / wall if wall > 0 else float("inf")
print(f"{model:<16} {r['nodes_before']:>6} {label:<8} {r['oracle_calls']:>7} {r['nodes_after']:>6} "
      f"{wall:>8.2f} {ratio:>8.1f}x  {target} (kept: {', '.join(r['kept_op_types'])})")
PY
}
check=(--check "$py" "$here/bench/check_op_present.py" onnxdbg_debug.onnx Log)
# Polygraphy 0.49.27 bisect figures recorded on this machine (issue 5): 4.4 s, 9.9 s, 12.0 s.
run resnet70 check 4.4 "faster than Polygraphy bisect (>=1x)" -j 2 "${check[@]}"
run transformer611 check 9.9 "faster than Polygraphy bisect (>=1x)" -j 2 "${check[@]}"
run dag1994 check 12.0 "faster than Polygraphy bisect (>=1x)" -j 2 "${check[@]}"
# Polygraphy linear on a 300-node chain: 77 s (target: at most 1/10 of it).
run chain300 check 77 "faster than 1/10 of Polygraphy linear (>=10x)" -j 2 "${check[@]}"
run resnet70 builtin 4.4 ">=100x Polygraphy bisect" --fail-on nan --backends reference
run transformer611 builtin 9.9 ">=100x Polygraphy bisect" --fail-on nan --backends reference
run dag1994 builtin 12.0 ">=100x Polygraphy bisect" --fail-on nan --backends reference
run chain300 builtin 77 ">=100x Polygraphy linear" --fail-on nan --backends reference
# Our own bisect mode with the external check, for comparison with Polygraphy's bisect.
run dag1994 bisect 12.0 "same algorithm as Polygraphy bisect" --mode bisect -j 2 "${check[@]}"

det="$models/ch_PP-OCRv4_det_infer.onnx"
if [ -f "$det" ]; then
  cp "$det" det.onnx
  # OpenCV 4.6 refuses the model: its importer takes Clip with one input only (opset >= 11 has 3).
  run det opencv 0 "at most 3 nodes left" --fail-on error --fail-regex Clip --backends opencv \
    --model-input-shapes x:1x3x320x320
  # Issue 18: a failure that needs two distant nodes at once (the second Conv and one 400 nodes
  # later), full mode: 672 -> 2 nodes, 77 oracle calls, 8.9 s when first measured.
  run det two_nodes 0 "2 nodes, 1-minimal, in minutes" --mode full -j 2 \
    --check "$py" "$here/bench/check_nodes_present.py" onnxdbg_debug.onnx p2o.Conv.1 p2o.Conv.55
fi
