#!/usr/bin/env bash
# `onnxdbg batch` with the local executor (issue 38): the public models (each with its
# --input-shapes from a list file), the demo model, and hostile ones: a model whose Loop never
# ends (a `timeout` row), a file that is not a model (an `error` row), a path that does not exist,
# a model whose ONNX Runtime worker crashes (a failed row naming the backend), the same bytes under
# two names (run once). Then: a second run runs only what timed out; --rerun runs everything;
# a job killed twice is `crashed` with the signal; Ctrl-C keeps every finished result; bad usage.
# usage: batch.sh ONNXDBG MODELS_DIR
set -uo pipefail
bin=$(realpath -m "$1")
models=$(realpath -m "$2")
src=$(cd "$(dirname "$0")/../.." && pwd)
source "$(dirname "$0")/common/onnx_proto.sh"
source "$(dirname "$0")/common/setup.sh"  # last: it changes the working directory
if [ "$protoc_ok" != 1 ]; then
  echo "FAIL: protoc or onnx.proto missing (scripts/install-deps.sh installs them)"
  exit 1
fi
# summary FILE EXPR: a Python expression over the summary `s` (jobs by (model basename, command)
# in `j`), printed; a tuple or list as its items' str() joined by spaces.
summary() {
  /usr/bin/python3 - "$1" "$2" <<'PY'
import json, os, sys
s = json.load(open(sys.argv[1]))
j = {(os.path.basename(r["model"]), r["command"]): r for r in s["jobs"]}
v = eval(sys.argv[2])
print(" ".join(str(x) for x in v) if isinstance(v, (tuple, list)) else v)
PY
}

mkdir -p m
cp "$models"/*.onnx m/
"$(dirname "$bin")/make-demo-model" m/demo.onnx
cp m/demo.onnx m/demo_copy.onnx
cp m/demo.onnx m/crash.onnx
head -c 3000 /dev/urandom > m/garbage.onnx
cat > spin.txtpb <<'PB'
ir_version: 8 opset_import { domain: "" version: 13 }
graph { name: "spin"
  input { name: "x" type { tensor_type { elem_type: 1 shape { dim { dim_value: 1 } } } } }
  initializer { name: "trips" data_type: 7 int64_data: 4611686018427387904 }
  initializer { name: "cond" data_type: 9 int32_data: 1 }
  node { name: "loop" op_type: "Loop" input: "trips" input: "cond" input: "x" output: "y"
    attribute { name: "body" type: GRAPH g { name: "body"
      input { name: "i" type { tensor_type { elem_type: 7 shape { } } } }
      input { name: "c_in" type { tensor_type { elem_type: 9 shape { } } } }
      input { name: "a_in" type { tensor_type { elem_type: 1 shape { dim { dim_value: 1 } } } } }
      node { op_type: "Identity" input: "c_in" output: "c_out" }
      node { op_type: "Identity" input: "a_in" output: "a_out" }
      output { name: "c_out" type { tensor_type { elem_type: 9 shape { } } } }
      output { name: "a_out" type { tensor_type { elem_type: 1 shape { dim { dim_value: 1 } } } } } } } }
  output { name: "y" type { tensor_type { elem_type: 1 shape { dim { dim_value: 1 } } } } } }
PB
encode_onnx_text spin.txtpb m/spin.onnx
# The list: the public models' arguments from tests/public_models.txt, the others by name.
{
  grep -v '^#' "$src/tests/public_models.txt" | awk 'NF'
  echo "demo.onnx"
  echo "demo_copy.onnx   # the same bytes: one job"
  echo "crash.onnx --backends reference,onnxruntime:debug_crash=run"
  echo "garbage.onnx"
  echo "spin.onnx"
  echo "nowhere.onnx"
} > m/models.txt

start=$(date +%s)
"$bin" batch m/models.txt --command run --command lint -o rep -j 2 --timeout 10 >out.txt 2>err.txt
rc=$?
first_s=$(( $(date +%s) - start ))
check "batch: exit 1 (some jobs did not pass), no crash" '[ $rc -eq 1 ]'
check "batch: summary.json and index.html written" '[ -s rep/summary.json ] && [ -s rep/index.html ]'
check "batch: 2 jobs per model of the list (12 models)" \
  '[ "$(summary rep/summary.json "len(s[\"jobs\"]), s[\"models\"]")" = "24 12" ]'
check "batch: the demo model passes run and lint" \
  '[ "$(summary rep/summary.json "j[(\"demo.onnx\",\"run\")][\"status\"], j[(\"demo.onnx\",\"lint\")][\"status\"]")" = "pass pass" ]'
check "batch: every public model's run ran with its --input-shapes (none is an error)" \
  '[ "$(summary rep/summary.json "sorted(set(j[(os.path.basename(m),\"run\")][\"status\"] for m in os.listdir(\"$models\") if m.endswith(\".onnx\")))")" != "" ] &&
   ! summary rep/summary.json "[k for k,r in j.items() if k[0] in os.listdir(\"$models\") and r[\"status\"] in (\"error\",\"timeout\",\"crashed\")]" | grep -q onnx'
check "batch: the Loop that never ends is one timeout row naming --timeout" \
  '[ "$(summary rep/summary.json "j[(\"spin.onnx\",\"run\")][\"status\"], j[(\"spin.onnx\",\"run\")][\"line\"]")" = "timeout ran past --timeout 10 s and was killed" ]'
check "batch: the file that is no model is an error row saying so, for run and lint" \
  '[ "$(summary rep/summary.json "j[(\"garbage.onnx\",\"run\")][\"status\"], j[(\"garbage.onnx\",\"lint\")][\"status\"]")" = "error error" ] &&
   [ -n "$(summary rep/summary.json "j[(\"garbage.onnx\",\"run\")][\"line\"]")" ]'
check "batch: the missing path is an error row, not a stop" \
  'summary rep/summary.json "j[(\"nowhere.onnx\",\"run\")]" | grep -q "no such file or folder"'
check "batch: the crashing ONNX Runtime worker is a fail row naming the backend and stage" \
  'summary rep/summary.json "j[(\"crash.onnx\",\"run\")][\"status\"], j[(\"crash.onnx\",\"run\")][\"details\"][\"backend_errors\"]" | grep -q "fail.*onnxruntime.*run"'
check "batch: the fleet view lists onnxruntime failing to run crash.onnx" \
  'summary rep/summary.json "s[\"fleet\"][\"backend_errors\"]" | grep -q "onnxruntime.*run.*crash.onnx"'
check "batch: the same bytes under two names ran once" \
  '[ "$(summary rep/summary.json "j[(\"demo_copy.onnx\",\"run\")][\"cached\"], j[(\"demo_copy.onnx\",\"run\")][\"key\"] == j[(\"demo.onnx\",\"run\")][\"key\"]")" = "True True" ]'
check "batch: each run job has its page, linked from index.html" \
  'p=$(summary rep/summary.json "j[(\"demo.onnx\",\"run\")][\"page\"]"); [ -s "rep/$p" ] && grep -q "href=\"$p\"" rep/index.html'
check "batch: each job's folder holds its record and the command's JSON" \
  'k=$(summary rep/summary.json "j[(\"demo.onnx\",\"lint\")][\"key\"]"); [ -s rep/jobs/$k/record.json ] && [ -s rep/jobs/$k/output.json ]'
check "batch: no staging folder left behind, nothing written in the working directory" \
  '[ ! -e rep/.staging ] && [ ! -e onnxdbg-repro ]'
check "batch: a line per job on stderr, the summary on stdout" \
  'grep -q "^\[24\] " err.txt && grep -q "^batch: 24 jobs on 12 models" out.txt'

counts_first=$(summary rep/summary.json "s[\"counts\"]")
# Again: every final result comes from the cache; only the timed-out job runs again.
"$bin" batch m/models.txt --command run --command lint -o rep -j 2 --timeout 10 >out2.txt 2>err2.txt
check "second run: only the timed-out job ran again" \
  '[ "$(summary rep/summary.json "s[\"ran\"], sum(r[\"cached\"] for r in s[\"jobs\"])")" = "1 21" ]'
check "second run: same statuses as the first" \
  '[ "$(summary rep/summary.json "s[\"counts\"]")" = "$counts_first" ]'
"$bin" batch m/demo.onnx --command lint -o rep --rerun >/dev/null 2>&1
check "--rerun runs a cached job again" '[ "$(summary rep/summary.json "s[\"ran\"]")" = "1" ]'

# A job whose onnxdbg is killed is run again (--retries 1), then recorded as crashed.
"$bin" batch m/spin.onnx --command run -o crashrep --timeout 120 >crash_out.txt 2>&1 &
batch_pid=$!
killed=0
for attempt in 1 2; do
  for _ in $(seq 1 200); do
    pid=$(pgrep -f "onnxdbg run m/spin.onnx" | head -1)
    [ -n "$pid" ] && break
    sleep 0.05
  done
  [ -n "$pid" ] && kill -9 "$pid" && killed=$((killed + 1))
  while kill -0 "$pid" 2>/dev/null; do sleep 0.05; done
done
wait $batch_pid
check "a job killed twice: crashed, naming SIGKILL and the two runs" \
  '[ $killed -eq 2 ] && [ "$(summary crashrep/summary.json "s[\"jobs\"][0][\"status\"], s[\"jobs\"][0][\"line\"]")" = "crashed onnxdbg was killed by signal 9 (SIGKILL), 2 times" ]'

# Ctrl-C: the finished jobs stay, the summary says it was cancelled, exit 2.
"$bin" batch m/demo.onnx m/spin.onnx --command run -o intrep -j 2 --timeout 120 >int_out.txt 2>&1 &
batch_pid=$!
for _ in $(seq 1 300); do
  [ -d intrep/jobs ] && [ -n "$(ls intrep/jobs)" ] && break
  sleep 0.05
done
kill -INT $batch_pid
wait $batch_pid
rc=$?
check "Ctrl-C: exit 2, the demo's finished result kept, the summary marks it cancelled" \
  '[ $rc -eq 2 ] && [ "$(summary intrep/summary.json "s[\"cancelled\"], len(s[\"jobs\"]), s[\"jobs\"][0][\"status\"]")" = "True 1 pass" ]'
check "Ctrl-C: the Loop's job process is gone" '! pgrep -f "onnxdbg run m/spin.onnx" >/dev/null'

# Bad usage: one sentence, exit 2, nothing run.
out=$("$bin" batch m/demo.onnx --command "diff" -o bad 2>&1); rc=$?
check "an unknown command: exit 2 naming the commands batch runs" \
  '[ $rc -eq 2 ] && grep -q "batch runs run, lint, inspect, reduce and bisect-optimizers" <<<"$out"'
out=$("$bin" batch m/demo.onnx --command "run --json" -o bad 2>&1); rc=$?
check "a command giving --json: exit 2, batch gives its own" '[ $rc -eq 2 ] && grep -q "gives --json itself" <<<"$out"'
out=$("$bin" batch m/demo.onnx --command "run --backends 'reference" -o bad 2>&1); rc=$?
check "an unclosed quote: exit 2" '[ $rc -eq 2 ] && grep -q "quote that is not closed" <<<"$out"'
out=$(ONNXDBG_PYTHON=/usr/bin/python3 "$bin" batch m/demo.onnx --command lint -o bad --executor ray --address 127.0.0.1:9 2>&1); rc=$?
check "--executor ray where Ray is missing or no cluster answers: exit 2, one sentence" \
  '[ $rc -eq 2 ] && grep -q "pip install ray\|no Ray cluster answers at 127.0.0.1:9" <<<"$out" && [ ! -e bad/jobs ]'
out=$("$bin" batch m/demo.onnx --command lint -o bad --executor ray 2>&1); rc=$?
check "--executor ray without an address: exit 2 naming --address" \
  '[ $rc -eq 2 ] && grep -q -- "--address HOST:PORT" <<<"$out"'
out=$("$bin" reduce m/demo.onnx -o r.onnx --fail-on mismatch --executor ray --address 127.0.0.1:9 2>&1); rc=$?
check "reduce --executor ray with the built-in oracle: exit 2, asks for --check" \
  '[ $rc -eq 2 ] && grep -q "runs --check commands as Ray tasks" <<<"$out" && [ ! -e r.onnx ]'
echo "first batch: ${first_s} s"
exit $fail
