#!/usr/bin/env bash
# `onnxdbg batch --executor ray` on a real two-node Ray cluster on 127.0.0.1 (issue 38): the public
# models (with their --input-shapes), the demo model and 30 generated ones (tests/ray/make_models.py)
# through `run --layerwise` and `lint`, once with the local executor and once with Ray: the same
# statuses, verdicts and first divergent nodes. Then the Ray batch again with a Ray worker killed
# (SIGKILL) while it runs a job: no result lost, none twice, the same report. Then a second run
# with nothing changed (everything from the cache) and an address where no cluster answers.
# usage: batch_ray.sh ONNXDBG MODELS_DIR RAY_VENV   (scripts/test-ray.sh: `make test-ray`)
set -uo pipefail
bin=$(realpath -m "$1")
models=$(realpath -m "$2")
venv=$(realpath -m "$3")
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
source "$here/cluster.sh"
source "$src/tests/cli/common/setup.sh"  # changes the working directory
ray_cluster_start "$venv"
export ONNXDBG_PYTHON="$venv/bin/python"

mkdir -p m
"$(dirname "$bin")/make-demo-model" m/demo.onnx
/usr/bin/python3 "$here/make_models.py" m/gen 30
{
  grep -v '^#' "$src/tests/public_models.txt" | awk 'NF {print "'"$models"'/" $0}'
  echo "demo.onnx"
  echo "gen"
} > m/models.txt
cmds=(-c "run --layerwise" -c lint)

# same DIR_A DIR_B: the two summaries agree on every (model, command): status, verdict, first
# divergent node (node, op type, backend), lint's counts; each job once.
same() {
  /usr/bin/python3 - "$1/summary.json" "$2/summary.json" <<'PY'
import json, sys
def rows(path):
    s = json.load(open(path))
    out = {}
    for j in s["jobs"]:
        d = j["details"] or {}
        f = d.get("first_divergent_node") or {}
        k = (j["model"], j["command"])
        assert k not in out, f"{k} twice in {path}"
        out[k] = (j["status"], d.get("verdict"), f.get("node"), f.get("op_type"), f.get("backend"),
                  d.get("errors"), d.get("warnings"))
    return out
a, b = rows(sys.argv[1]), rows(sys.argv[2])
bad = [k for k in a if a[k] != b.get(k)] + [k for k in b if k not in a]
for k in bad[:5]:
    print("differs:", k, a.get(k), b.get(k))
print(f"{len(a)} jobs, {len(bad)} differ")
sys.exit(1 if bad or len(a) < 70 else 0)
PY
}

t0=$(date +%s.%N)
"$bin" batch m/models.txt "${cmds[@]}" -o local -j 2 --timeout 300 >local.txt 2>&1
t1=$(date +%s.%N)
"$bin" batch m/models.txt "${cmds[@]}" -o ray --executor ray --address "127.0.0.1:$RAY_PORT" \
  --timeout 300 >ray.txt 2>&1
rc=$?
t2=$(date +%s.%N)
check "ray: the batch ran (exit 1: some models diverge)" '[ $rc -eq 1 ] && grep -q "^batch: 74 jobs on 37 models" ray.txt'
check "ray: the same report as the local executor" 'same local ray'
check "ray: the jobs' pages came back from the workers" \
  '[ "$(ls ray/jobs/*/page.html | wc -l)" -ge 70 ]'

# A Ray worker killed with SIGKILL while it runs a job: Ray runs the task again (--retries 1).
"$bin" batch m/models.txt "${cmds[@]}" -o killed --executor ray --address "127.0.0.1:$RAY_PORT" \
  --timeout 300 >killed.txt 2>&1 &
batch_pid=$!
victim=""
for _ in $(seq 1 2000); do
  victim=$(pgrep -f "^ray::run_job" | head -1)
  [ -n "$victim" ] && [ -d killed/jobs ] && [ "$(ls killed/jobs | wc -l)" -ge 5 ] && break
  victim=""
  sleep 0.01
done
[ -n "$victim" ] && kill -9 "$victim"
wait $batch_pid
check "killed worker: a worker running a job was killed" '[ -n "$victim" ]'
check "killed worker: no result lost, none twice, the same report" 'same local killed'

# Nothing changed: everything comes from the cache.
"$bin" batch m/models.txt "${cmds[@]}" -o ray --executor ray --address "127.0.0.1:$RAY_PORT" \
  --timeout 300 >again.txt 2>&1
check "ray again: every job from the cache" 'grep -q "(0 run now, 74 from the cache)" again.txt'

# reduce --executor ray: each --check runs as a Ray task with the candidate sent along; the
# result and the journal's verdicts are those of the local run.
for where in local ray; do
  extra=()
  [ $where = ray ] && extra=(--executor ray --address "127.0.0.1:$RAY_PORT")
  "$bin" reduce m/gen/chain06.onnx -o "reduced_$where.onnx" --fail-regex Gelu -j 2 "${extra[@]}" \
    --check "$bin" lint onnxdbg_debug.onnx >"reduce_$where.txt" 2>&1
done
check "reduce --executor ray: the same reduced model as the local run" \
  '[ -s reduced_ray.onnx ] && cmp -s reduced_local.onnx reduced_ray.onnx'
check "reduce --executor ray: the same verdicts in the journal" \
  '[ "$(grep -o "\"fails\":[a-z]*" reduced_local.onnx.journal)" = "$(grep -o "\"fails\":[a-z]*" reduced_ray.onnx.journal)" ]'

out=$("$bin" batch m/demo.onnx -c lint -o none --executor ray --address 127.0.0.1:9 2>&1); rc=$?
check "no cluster at the address: exit 2, one sentence naming it, nothing run" \
  '[ $rc -eq 2 ] && grep -q "no Ray cluster answers at 127.0.0.1:9" <<<"$out" && [ ! -e none/jobs ]'
echo "local -j 2: $(echo "$t1 - $t0" | bc) s, ray (3 CPUs on 2 nodes): $(echo "$t2 - $t1" | bc) s"
exit $fail
