#!/usr/bin/env bash
# bench/quant.sh BUILD_DIR [WILD_MODELS_DIR]: the quantized and float16 benchmark (issue 19, item
# 2). Writes make-quant-models' models (an int8 U-Net in onnxruntime.quantization's dynamic form,
# a QLinearConv encoder, a MatMulInteger/QLinearMatMul MLP, a float16 CNN and a float16 MLP) into
# BUILD_DIR/bench-quant and runs bench_models on them: median run time of the reference and ONNX
# Runtime, one thread each, and the ratio reference / ONNX Runtime (vs_ort), the two taking three
# turns each (bench_models --rounds 3: this machine's speed drifts by up to 2x over seconds).
# Target: <= 3x (issue 19); issue 40's for the QLinearConv CNN, the MLP and the float16 CNN:
# <= 1.5x.
# With WILD_MODELS_DIR (scripts/fetch-bench-models.sh: IS-Net background removal in int8 and
# float16, 1x3x1024x1024), the same on those, then `run --layerwise` on each with a
# --layerwise-memory budget (LAYERWISE_BUDGET, in MiB or GiB; default 1GiB, issue 40's figure)
# against one plain reference run (median of LAYERWISE_RUNS, default 3): the ratio of the whole
# commands' wall times (target <= 8x), the reference runs the pass made, and onnxdbg's peak resident
# memory (GNU time's %M) and how much of it is over the plain reference run's.
set -euo pipefail
build=$1 wild=${2:-}
here=$(cd "$(dirname "$0")/.." && pwd)
out="$build/bench-quant"
cmake --build "$build" --target make-quant-models bench_models onnxdbg-worker onnxdbg >/dev/null
"$build/make-quant-models" "$out"
echo "quantized models (bench/quant.sh): reference vs ONNX Runtime, one thread each"
"$build/bench_models" --rounds 3 --backends onnxruntime:threads=1,reference:threads=1 "$out" \
  "$out/models.txt"
[ -n "$wild" ] || exit 0
if [ ! -f "$wild/.verified" ]; then echo "bench/quant: $wild not fetched (make bench-models)"; exit 1; fi
list="$here/bench/wild_models.txt"
echo "third-party int8 and float16 models (bench/quant.sh): reference vs ONNX Runtime, one thread each"
"$build/bench_models" --backends onnxruntime:threads=1,reference:threads=1 "$wild" "$list"
budget=${LAYERWISE_BUDGET:-1GiB}
runs=${LAYERWISE_RUNS:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
case $budget in  # whole MiB or GiB, as the figures below
  *GiB) budget_mib=$((${budget%GiB} * 1024)) ;;
  *MiB) budget_mib=${budget%MiB} ;;
  *) echo "bench/quant: LAYERWISE_BUDGET must be N MiB or N GiB, e.g. 1GiB"; exit 1 ;;
esac
# median FILE: the median of each column of FILE's lines (wall s, peak KiB).
median() { python3 -c "
import statistics, sys
rows = [list(map(float, l.split())) for l in open(sys.argv[1])]
print(' '.join(str(statistics.median(r[i] for r in rows)) for i in range(len(rows[0]))))" "$1"; }
echo "run --layerwise --backends reference,onnxruntime --layerwise-memory $budget against one plain"
echo "reference run (run --backends reference), whole commands, median of $runs; target <= 8x, peak"
echo "over the plain run's <= the budget (the reference's working set is not counted by it)"
printf '%-20s %9s %9s %7s %5s %9s %9s  %s\n' model "plain s" "lw s" ratio "ref" "peak MiB" "over MiB" "last line"
grep -v '^#' "$list" | while read -r file args; do
  [ -n "$file" ] || continue
  : >"$tmp/plain" && : >"$tmp/lw"
  for _ in $(seq "$runs"); do
    # shellcheck disable=SC2086 # the list's arguments are words
    /usr/bin/time -f '%e %M' -o "$tmp/time" "$build/onnxdbg" run "$wild/$file" $args --seed 1 \
      --backends reference >/dev/null 2>&1 || true
    tail -1 "$tmp/time" >>"$tmp/plain"
    # shellcheck disable=SC2086
    /usr/bin/time -f '%e %M' -o "$tmp/time" "$build/onnxdbg" run "$wild/$file" $args --seed 1 \
      --backends reference,onnxruntime --layerwise --layerwise-memory "$budget" --json \
      >"$tmp/out.json" 2>"$tmp/err" || true
    tail -1 "$tmp/time" >>"$tmp/lw"
  done
  read -r plain_s plain_kib < <(median "$tmp/plain")
  read -r lw_s lw_kib < <(median "$tmp/lw")
  python3 - "$tmp/out.json" "$file" "$plain_s" "$lw_s" "$plain_kib" "$lw_kib" "$budget_mib" <<'PY'
import json, sys
path, name, plain_s, lw_s, plain_kib, lw_kib, budget = sys.argv[1:]
text = open(path).read()
try:
    j = json.JSONDecoder().raw_decode(text)[0]
    s = j["layerwise_summary"]
    runs, last = s["reference_runs"], j.get("verdict_line", "")
except (ValueError, KeyError):
    runs, last = "?", (text.strip().splitlines() or ["no output"])[-1]
ratio = float(lw_s) / float(plain_s)
over = (float(lw_kib) - float(plain_kib)) / 1024
print(f"{name:<20} {float(plain_s):9.2f} {float(lw_s):9.2f} {ratio:6.2f}x {runs!s:>5} "
      f"{float(lw_kib) / 1024:9.0f} {over:9.0f}  {last[:60]}")
print(f"{'':<20} ratio <= 8x: {'ok' if ratio <= 8 else 'MISSED'}; peak over the plain run "
      f"<= {budget} MiB: {'ok' if over <= float(budget) else 'MISSED'}")
PY
done
