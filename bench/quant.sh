#!/usr/bin/env bash
# bench/quant.sh BUILD_DIR [WILD_MODELS_DIR]: the quantized and float16 benchmark (issue 19, item
# 2). Writes make-quant-models' models (an int8 U-Net in onnxruntime.quantization's dynamic form,
# a QLinearConv encoder, a MatMulInteger/QLinearMatMul MLP and a float16 CNN) into
# BUILD_DIR/bench-quant and runs bench_models on them: median run time of the reference and ONNX
# Runtime, one thread each, and the ratio reference / ONNX Runtime (vs_ort). Target: <= 3x.
# With WILD_MODELS_DIR (scripts/fetch-bench-models.sh: IS-Net background removal in int8 and
# float16, 1x3x1024x1024), the same on those, then `run --layerwise` on each with a
# --layerwise-memory budget (LAYERWISE_BUDGET, in MiB or GiB; default 2GiB) and onnxdbg's peak resident memory
# beside it (GNU time's %M).
set -euo pipefail
build=$1 wild=${2:-}
here=$(cd "$(dirname "$0")/.." && pwd)
out="$build/bench-quant"
cmake --build "$build" --target make-quant-models bench_models onnxdbg-worker onnxdbg >/dev/null
"$build/make-quant-models" "$out"
echo "quantized models (bench/quant.sh): reference vs ONNX Runtime, one thread each"
"$build/bench_models" --backends onnxruntime:threads=1,reference:threads=1 "$out" "$out/models.txt"
[ -n "$wild" ] || exit 0
if [ ! -f "$wild/.verified" ]; then echo "bench/quant: $wild not fetched (make bench-models)"; exit 1; fi
list="$here/bench/wild_models.txt"
echo "third-party int8 and float16 models (bench/quant.sh): reference vs ONNX Runtime, one thread each"
"$build/bench_models" --backends onnxruntime:threads=1,reference:threads=1 "$wild" "$list"
budget=${LAYERWISE_BUDGET:-2GiB}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "run --layerwise --backends reference,onnxruntime --layerwise-memory $budget"
printf '%-22s %9s %10s %12s  %s\n' model seconds "peak MiB" "budget MiB" "last line"
case $budget in  # whole MiB or GiB, as the figures below
  *GiB) budget_mib=$((${budget%GiB} * 1024)) ;;
  *MiB) budget_mib=${budget%MiB} ;;
  *) echo "bench/quant: LAYERWISE_BUDGET must be N MiB or N GiB, e.g. 2GiB"; exit 1 ;;
esac
grep -v '^#' "$list" | while read -r file args; do
  [ -n "$file" ] || continue
  start=$(date +%s.%N)
  # shellcheck disable=SC2086 # the list's arguments are words
  /usr/bin/time -f %M -o "$tmp/time" "$build/onnxdbg" run "$wild/$file" $args --seed 1 \
    --backends reference,onnxruntime --layerwise --layerwise-memory "$budget" \
    >"$tmp/out" 2>&1 || true
  end=$(date +%s.%N)
  printf '%-22s %9.1f %10.0f %12s  %s\n' "$file" "$(echo "$end - $start" | bc)" \
    "$(echo "$(tail -1 "$tmp/time") / 1024" | bc)" "$budget_mib" "$(tail -1 "$tmp/out" | cut -c1-70)"
done
