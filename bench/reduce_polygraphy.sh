#!/usr/bin/env bash
# bench/reduce_polygraphy.sh BUILD_DIR MODELS_DIR: `onnxdbg reduce` and Polygraphy's
# `polygraphy debug reduce` (PyPI, in BUILD_DIR/polygraphy-venv: scripts/polygraphy-venv.sh) side by
# side on the same failures with the same external check (issue 18): chains of 50, 300 and 2,000
# nodes and a model whose failing op sits two If levels down (make-reduce-models; check: "a Log
# node is left", bench/check_op_present.py), and the public det model with "a ConvTranspose is
# left" (when MODELS_DIR has it). Both tools run one check at a time. Prints, per tool and mode:
# nodes before and after (subgraph nodes in brackets), graph outputs left, wall seconds and oracle
# calls (counted by the check itself, for both tools alike).
set -euo pipefail
build=$(cd "$1" && pwd) models=$(cd "$2" && pwd)
here=$(cd "$(dirname "$0")/.." && pwd)
py=/usr/bin/python3
if ! "$py" -c 'import onnx' 2>/dev/null; then
  echo "bench/reduce_polygraphy: python3-onnx is missing (scripts/install-deps.sh installs it)"
  exit 1
fi
venv=$(bash "$here/scripts/polygraphy-venv.sh" "$build")
pg_version=$("$venv/bin/python" -c 'import polygraphy; print(polygraphy.__version__)')
cmake --build "$build" --target onnxdbg make-reduce-models >/dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$build/make-reduce-models" "$work"
[ -f "$models/ch_PP-OCRv4_det_infer.onnx" ] && cp "$models/ch_PP-OCRv4_det_infer.onnx" "$work/det.onnx"
cd "$work"
now() { date +%s.%N; }
echo "reduce: onnxdbg $(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo '?') vs polygraphy" \
  "$pg_version (debug reduce), same check, one check at a time"
printf '%-10s %-10s %-7s %14s %14s %7s %8s %6s  %s\n' model tool mode before after outputs \
  wall_s checks result
# Nodes of a model as "main [in subgraphs]" and its graph outputs.
count() {
  "$py" - "$1" <<'PY'
import sys
import onnx
m = onnx.load(sys.argv[1])
def sub(g):
    n = 0
    for node in g.node:
        for a in node.attribute:
            for s in ([a.g] if a.HasField("g") else list(a.graphs)):
                n += len(s.node) + sub(s)
    return n
print(f"{len(m.graph.node)} [{sub(m.graph)}]", len(m.graph.output))
PY
}
# case MODEL OP TOOL MODE [extra args]: reduces MODEL.onnx while a node of type OP is left.
case_() {
  local model=$1 op=$2 tool=$3 mode=$4
  shift 4
  local out="$model.$tool.$mode.onnx" calls="$work/$model.$tool.$mode.calls" log t0 t1 rc
  log="$work/$model.$tool.$mode.log"
  : >"$calls"
  t0=$(now)
  set +e
  if [ "$tool" = onnxdbg ]; then
    "$build/onnxdbg" reduce "$model.onnx" -o "$out" --mode "$mode" -j 1 "$@" \
      --check "$py" "$here/bench/check_op_present.py" onnxdbg_debug.onnx "$op" "$calls" >"$log" 2>&1
  else
    "$venv/bin/polygraphy" debug reduce "$model.onnx" -o "$out" --mode "$mode" "$@" \
      --check "$py" "$here/bench/check_op_present.py" polygraphy_debug.onnx "$op" "$calls" \
      >"$log" 2>&1
  fi
  rc=$?
  set -e
  t1=$(now)
  local before after result=ok
  before=$(count "$model.onnx")
  if [ $rc -eq 0 ] && [ -f "$out" ]; then
    after=$(count "$out")
  else
    after="- -"
    result="failed ($(grep -m1 -E 'error|ERROR|\[E\]|\[!\]' "$log" | cut -c1-60))"
  fi
  printf '%-10s %-10s %-7s %14s %14s %7s %8.1f %6s  %s\n' "$model" "$tool" "$mode" \
    "${before% *}" "${after% *}" "${after##* }" "$(echo "$t1 - $t0" | bc)" \
    "$(wc -l <"$calls")" "$result"
}
for model in chain50 chain300 chain2000 nested_if; do
  case_ "$model" Log onnxdbg full
  case_ "$model" Log onnxdbg bisect
  case_ "$model" Log polygraphy bisect
done
# Polygraphy's linear mode: one node at a time (77 s on chain300 when issue 5 measured it).
case_ chain50 Log onnxdbg linear
case_ chain50 Log polygraphy linear
case_ chain300 Log onnxdbg linear
case_ chain300 Log polygraphy linear
if [ -f det.onnx ]; then
  case_ det ConvTranspose onnxdbg full --model-input-shapes x:1x3x320x320
  case_ det ConvTranspose onnxdbg bisect --model-input-shapes x:1x3x320x320
  case_ det ConvTranspose polygraphy bisect --model-input-shapes 'x:[1,3,320,320]'
fi
