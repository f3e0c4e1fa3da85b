#!/usr/bin/env bash
# The speed targets of the structural tools (issue 6), through the real binary: lint of a
# 2,000-node model under 0.5 s, and `surgeon sanitize --fold-constants` of ch_PP-OCRv4_det_infer
# to a fixed point under 2 s. Measured as CPU time (user + sys), which other jobs on a busy
# machine do not inflate; wall times are printed beside them.
# A benchmark, not a test (speed targets live in `make bench`).
# usage: structure.sh ONNXDBG MODELS_DIR
set -uo pipefail
bin=$1 models=$2
synth="$(dirname "$bin")/make-synthetic-model"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi; }

# Runs "$@" with stdout and stderr to $tmp/out; sets cpu and wall (seconds).
measure() {
  local TIMEFORMAT='%U %S %R' t
  t=$({ time "$@" >"$tmp/out" 2>&1; } 2>&1)
  read -r user sys wall <<<"$t"
  cpu=$(python3 -c "print(round($user + $sys, 3))")
}

if [ -x "$synth" ]; then
  "$synth" 2000 "$tmp/s2000.onnx" >/dev/null
  "$bin" lint "$tmp/s2000.onnx" >/dev/null 2>&1  # warm the page cache
  measure "$bin" lint "$tmp/s2000.onnx"
  echo "lint, 2,000 nodes: ${cpu} s CPU, ${wall} s wall"
  check "lint of a 2,000-node model exits 0" 'grep -q "^0 errors" "$tmp/out"'
  check "lint of a 2,000-node model under 0.5 s CPU" 'python3 -c "import sys; sys.exit(0 if $cpu < 0.5 else 1)"'
else
  echo "FAIL: $synth not built"; fail=1
fi

if [ -f "$models/.verified" ]; then
  det="$models/ch_PP-OCRv4_det_infer.onnx"
  measure "$bin" surgeon sanitize "$det" -o "$tmp/det.onnx" --override-input-shapes x:1x3x640x640 \
    --fold-constants --json
  fold_wall=$(python3 -c "import json; print(round(json.load(open('$tmp/out'))['sanitize']['seconds'], 3))" 2>/dev/null)
  echo "sanitize --fold-constants, ch_PP-OCRv4_det_infer: ${cpu} s CPU for the whole command" \
       "(load, fold, check, write), ${wall} s wall; the fold itself ${fold_wall} s wall"
  check "fold-constants on ch_PP-OCRv4_det_infer reaches a fixed point" \
    'python3 -c "import json, sys; f = json.load(open(\"$tmp/out\"))[\"sanitize\"][\"fold\"]; sys.exit(0 if f[\"nodes_folded\"] > 300 and f[\"passes\"] >= 2 else 1)"'
  check "fold-constants on ch_PP-OCRv4_det_infer under 2 s CPU" 'python3 -c "import sys; sys.exit(0 if $cpu < 2 else 1)"'
else
  echo "SKIP fold target: public models not fetched"
fi
exit $fail
