#!/usr/bin/env bash
# bench/layerwise.sh BUILD_DIR MODELS_DIR: the cost of `run --layerwise --isolate` (issue 4) on
# ch_PP-OCRv4_det_infer at 1x3x640x640, against one plain reference run plus one plain ONNX Runtime
# run (one thread each: reference:threads=1, onnxruntime:threads=1; the golden run of --layerwise
# takes the first reference backend's options). Target: at most 4x (issue 40; issue 4 set 5x). A --layerwise-memory
# of 768MiB makes the 659 MiB of intermediate tensors come in several batches, so the budget path
# runs; onnxdbg's peak resident memory over the plain reference run's must stay within it.
# Wall and CPU time (user + sys, workers included) are printed: on a busy machine the CPU ratio
# is the steadier one. A benchmark, not a test.
set -euo pipefail
build=$(cd "$1" && pwd) models=$(cd "$2" && pwd)
bin=$build/onnxdbg
model=$models/ch_PP-OCRv4_det_infer.onnx
budget=${LAYERWISE_BUDGET:-768MiB}
[ -f "$model" ] || { echo "bench/layerwise: $model is missing (make models)"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
common=("$model" --input-shapes x:1x3x640x640 --seed 7 --atol 1e-4 --rtol 1e-3)

# measure NAME ARGS...: wall s, CPU s (user+sys, children included), peak RSS KiB of the tree;
# each the median of $runs runs. On a virtual machine the first touch of fresh memory costs
# 1-3 ms per MiB and varies from run to run with the host, so one run is a noisy figure.
runs=${LAYERWISE_RUNS:-3}
measure() {
  local name=$1
  shift
  : >"$tmp/$name.runs"
  for _ in $(seq "$runs"); do
    /usr/bin/time -o "$tmp/$name.time" -f '%e %U %S %M' "$bin" run "${common[@]}" "$@" \
      >"$tmp/$name.out" 2>"$tmp/$name.err" || true
    read -r wall user sys rss < <(tail -n 1 "$tmp/$name.time")  # after "exited with status 1"
    echo "$wall $(python3 -c "print(round($user + $sys, 3))") $rss" >>"$tmp/$name.runs"
  done
  echo "$name $(python3 -c "
import statistics, sys
rows = [list(map(float, l.split())) for l in open(sys.argv[1])]
print(' '.join(str(statistics.median(r[i] for r in rows)) for i in range(3)))" "$tmp/$name.runs")"
}

"$bin" run "${common[@]}" --backends reference:threads=1 >/dev/null 2>&1 || true  # warm the page cache
{
  measure reference --backends reference:threads=1
  measure onnxruntime --backends onnxruntime:threads=1
  measure layerwise --backends reference:threads=1,onnxruntime:threads=1 --layerwise --isolate \
    --layerwise-memory "$budget" --save-repro "$tmp/repro" --json
} >"$tmp/figures"
python3 - "$tmp/figures" "$tmp/layerwise.out" "$budget" "$runs" <<'PY'
import json, re, sys
fig = {l.split()[0]: [float(x) for x in l.split()[1:]] for l in open(sys.argv[1])}
j = json.load(open(sys.argv[2]))
s = j["layerwise_summary"]
ref, ort, lw = fig["reference"], fig["onnxruntime"], fig["layerwise"]
base_wall, base_cpu = ref[0] + ort[0], ref[1] + ort[1]
print("ch_PP-OCRv4_det_infer 1x3x640x640, one thread each (seconds: wall / CPU, median of "
      f"{sys.argv[4]} runs)")
print(f"  plain reference run      {ref[0]:6.2f} / {ref[1]:6.2f}")
print(f"  plain onnxruntime run    {ort[0]:6.2f} / {ort[1]:6.2f}")
b = s["backends"][0]
print(f"  layerwise --isolate      {lw[0]:6.2f} / {lw[1]:6.2f}   ({s['tensors']} tensors, "
      f"{b['batches']} batches, {s['reference_runs']} reference runs, "
      f"{b.get('failed', '?')} outside atol 1e-4 rtol 1e-3)")
for what, r in (("wall", lw[0] / base_wall), ("CPU", lw[1] / base_cpu)):
    print(f"  ratio ({what:4}) {r:5.2f}x  target <= 4x: {'ok' if r <= 4 else 'NOT MET'}")
budget = s["memory_budget_bytes"]
peak = s["peak_rss_bytes"]
base = ref[2] * 1024  # the plain reference run: model, inputs and the interpreter's own peak
over = peak - base
print(f"  onnxdbg peak RSS {peak / 2**20:.0f} MiB, {over / 2**20:.0f} MiB over the plain reference "
      f"run ({base / 2**20:.0f} MiB); budget --layerwise-memory {sys.argv[3]}: "
      f"{'ok' if over <= budget else 'OVER'}")
print(f"  process tree peak RSS (workers included) {lw[2] / 1024:.0f} MiB")
PY
