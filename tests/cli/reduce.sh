#!/usr/bin/env bash
# `onnxdbg reduce` through the real binary, as a user runs it: an external --check command (a real
# subprocess that fails while the candidate holds a Log node) on the benchmark's 300-node chain,
# the built-in mismatch oracle on the demo model (OpenCV's Softmax axis bug), and the bad inputs:
# a missing check command, an original that does not fail, no oracle at all.
# usage: reduce.sh ONNXDBG MODELS_DIR
set -uo pipefail
bin=$(realpath -m "$1")
models=$(realpath -m "${2:-.}")
tools="$(dirname "$bin")"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fail=1; return 1; fi; }
cd "$tmp"
"$tools/make-reduce-models" "$tmp" || { echo "FAIL make-reduce-models"; exit 1; }
"$tools/make-demo-model" "$tmp/demo.onnx" || { echo "FAIL make-demo-model"; exit 1; }

# External check: grep the protobuf for the op type (exit 1 = still failing), two at a time.
"$bin" reduce chain300.onnx -o reduced.onnx -j 2 --artifacts arts --min-good good.onnx \
  --check sh -c '! grep -qa Log onnxdbg_debug.onnx' > out.txt 2> err.txt
rc=$?
check "check oracle exits 0" "[ $rc -eq 0 ]" || cat out.txt err.txt
check "reduced to the one Log node" "grep -q 'reduced 300 -> 1 node' out.txt && grep -q \"#181 Log 'Log_181'\" out.txt" || cat out.txt
check "reduced model written and loadable" "$bin inspect reduced.onnx > insp.txt && grep -q Log insp.txt"
check "artifacts sorted into good/ and bad/" "ls arts/bad/iter_1.onnx >/dev/null && [ -n \"\$(ls arts/good)\" ]"
check "min-good written" "[ -s good.onnx ]"
check "journal written" "[ -s reduced.onnx.journal ]"

# --resume replays from the journal: only the original and the confirmation reach the oracle.
"$bin" reduce chain300.onnx -o reduced.onnx -j 2 --resume --json \
  --check sh -c '! grep -qa Log onnxdbg_debug.onnx' > resumed.json 2> err.txt
check "resume calls the oracle twice" "grep -q '\"oracle_calls\": 2' resumed.json" || cat resumed.json err.txt

# Built-in oracle: OpenCV 4.6 applies Softmax on the wrong axis for opset 13.
"$bin" reduce demo.onnx -o demo_reduced.onnx --fail-on mismatch --backends reference,opencv \
  --atol 1e-4 --rtol 1e-3 --json --html demo.html > demo.json 2> err.txt
rc=$?
check "mismatch oracle exits 0" "[ $rc -eq 0 ]" || cat demo.json err.txt
check "mismatch reduced to Softmax" "python3 -c 'import json,sys; r=json.load(open(\"demo.json\")); sys.exit(r[\"kept_op_types\"] != [\"Softmax\"])'" || cat demo.json

check "html page highlights the reduced node" "grep -q 'reduced model' demo.html && grep -q '1 of 5 nodes still fail' demo.html" || ls -la

# Issue 18: the public det model. Its ConvTranspose cut from the output side only
# (--no-reduce-inputs) ends with one graph output and no dead node in bisect and linear modes,
# at most the 324 nodes (Constants aside) of Polygraphy's bisect (was 666 nodes and 8 outputs:
# orphaned Constants became outputs); OpenCV 4.6 refuses its 3-input
# Clip, and `--fail-on error` ends at that Clip in every mode (was a lone Constant, which OpenCV
# refuses for another reason).
det="$models/ch_PP-OCRv4_det_infer.onnx"
if [ -f "$det" ]; then
  for mode in bisect linear; do
    "$bin" reduce "$det" -o "det_$mode.onnx" --mode $mode --no-reduce-inputs --json \
      --model-input-shapes x:1x3x320x320 --check sh -c '! grep -qa ConvTranspose onnxdbg_debug.onnx' \
      > "det_$mode.json" 2> err.txt
    check "det ConvTranspose, $mode: one output, the graph input kept" "python3 -c 'import json,sys; r=json.load(open(\"det_$mode.json\")); sys.exit(not (len(r[\"outputs\"]) == 1 and r[\"inputs\"] == [\"x\"] and \"ConvTranspose\" in r[\"kept_op_types\"] and sum(t != \"Constant\" for t in r[\"kept_op_types\"]) <= 324))'" || { head -c 600 "det_$mode.json"; cat err.txt; }
    "$bin" lint "det_$mode.onnx" > lint.txt 2>&1
    check "det ConvTranspose, $mode: no dead node or unused initializer" "! grep -Eq 'dead_node|unused_initializer' lint.txt" || grep -E 'dead_node|unused' lint.txt | head
  done
  for mode in full bisect linear; do
    "$bin" reduce "$det" -o "det_ocv_$mode.onnx" --mode $mode --fail-on error --backends reference,opencv \
      --input-shapes x:1x3x320x320 --json > "det_ocv_$mode.json" 2> err.txt
    check "det/OpenCV --fail-on error, $mode: ends at the Clip OpenCV refuses" "python3 -c 'import json,sys; r=json.load(open(\"det_ocv_$mode.json\")); sys.exit(r[\"kept_op_types\"] != [\"Clip\"] or \"Clip\" not in r[\"signature\"])'" || { head -c 800 "det_ocv_$mode.json"; cat err.txt; }
  done
else
  echo "skip det model checks: $det not fetched (make models)"
fi

# The public VAD model overflows float16 inside the then branch of If_25 (values of 7e7): a
# float16 run disagrees, and the reduction ends at that Mul alone, the If gone (the whole model
# runs float16, bodies included, as its layerwise pass does).
vad="$models/silero_vad_legacy.onnx"
if [ -f "$vad" ]; then
  "$bin" reduce "$vad" -o vad.onnx --input-shapes input:1x512,h:2x1x64,c:2x1x64 \
    --val-range 'sr:[16000,16000]' --backends onnxruntime,reference:precision=fp16 --atol 1e-2 \
    --rtol 1e-2 --fail-on mismatch --json > vad.json 2> err.txt
  check "VAD float16 overflow reduced to the Mul inside If_25's then branch" "python3 -c 'import json,sys; r=json.load(open(\"vad.json\")); sys.exit(r[\"kept_op_types\"] != [\"Mul\"] or \"If_25\" not in json.dumps(r))'" || { head -c 800 vad.json; cat err.txt; }
else
  echo "skip VAD model check: $vad not fetched (make models)"
fi

# Bad input.
"$bin" reduce chain300.onnx -o x.onnx --check no-such-check-cmd arg > out.txt 2> err.txt
rc=$?
check "missing check command: exit 2" "[ $rc -eq 2 ]"
check "missing check command: says so" "grep -q \"check command 'no-such-check-cmd' was not found\" err.txt" || cat err.txt
"$bin" reduce chain300.onnx -o x.onnx --check sh -c 'exit 0' > out.txt 2> err.txt
rc=$?
check "original passes: exit 1" "[ $rc -eq 1 ]"
check "original passes: says so" "grep -q 'does not fail' out.txt" || cat out.txt err.txt
check "original passes: nothing written" "[ ! -e x.onnx ]"
"$bin" reduce chain300.onnx -o x.onnx > out.txt 2> err.txt
rc=$?
check "no oracle: exit 2 with a hint" "[ $rc -eq 2 ] && grep -q -- '--fail-on' err.txt"
"$bin" reduce missing.onnx -o x.onnx --fail-on nan > out.txt 2> err.txt
check "missing model: exit 2" "[ $? -eq 2 ] && grep -q 'missing.onnx' err.txt"

# SIGTERM while a check runs (issue 17): the check's whole process group ends with onnxdbg (the
# `sleep` below is a grandchild), and its temp folder goes. The first check (the original) fails
# at once; the second sleeps.
mkdir -p term_tmp
TMPDIR="$tmp/term_tmp" "$bin" reduce chain300.onnx -o term.onnx --check sh -c \
  'if [ -e started ]; then sleep 97.25 & echo $! > sleeper.pid; wait; fi; touch started; exit 1' \
  > out.txt 2> err.txt &
pid=$!
for _ in $(seq 1 200); do [ -s sleeper.pid ] && break; sleep 0.05; done
check "second check started" "[ -s sleeper.pid ]"
kill -TERM $pid
for _ in $(seq 1 100); do kill -0 $pid 2>/dev/null || break; sleep 0.05; done
check "reduce ended within 5 s of SIGTERM" "! kill -0 $pid 2>/dev/null"
wait $pid; rc=$?
check "SIGTERM: exit status 2 or 130+" "[ $rc -ne 0 ]"
# Gone, or a zombie waiting for init to reap it.
alive() { local st; st=$(ps -o stat= -p "$1" 2>/dev/null) && [ -n "$st" ] && [ "${st#Z}" = "$st" ]; }
sleep 0.2
check "SIGTERM: the check's grandchild is gone" "! alive \$(cat sleeper.pid)" || ps -o pid,stat,args -p "$(cat sleeper.pid)"
check "SIGTERM: says it was cancelled" "grep -qi cancel err.txt out.txt" || cat out.txt err.txt
check "SIGTERM: no temp folder left" "[ -z \"\$(ls term_tmp)\" ]" || ls term_tmp
exit $fail
