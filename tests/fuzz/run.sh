#!/usr/bin/env bash
# run.sh BUILD MODELS SECONDS [TARGET...]: `make fuzz`. Runs each libFuzzer binary BUILD/fuzz-<target>
# for SECONDS on its corpus (BUILD/fuzz-corpus/<target>, seeded by make_corpus.sh and grown by every
# run), one job per core. Crashes, leaks, timeouts and out-of-memory inputs land in
# BUILD/fuzz-findings/<target>/; the run fails when any target found one (copy each, minimized with
# `fuzz-<target> -minimize_crash=1`, into tests/fuzz/regressions/<target>/ once it is fixed). Prints
# the executions of each target and their total.
set -euo pipefail
build=$(cd "$1" && pwd) models=$2 seconds=$3
shift 3
here=$(cd "$(dirname "$0")" && pwd)
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  mapfile -t targets < <(sed -n 's/^ONNXDBG_FUZZ_TARGET(\(.*\))$/\1/p' "$here/targets.def")
fi
bash "$here/make_corpus.sh" "$build" "$models" "$build/fuzz-corpus"
# A crash in the forked shape-inference child is a result onnxdbg reports, not a finding; libFuzzer
# and the sanitizers leave it to the child's default handlers (model/shape_inference.cpp).
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$here/lsan.supp}
jobs=${FUZZ_JOBS:-$(nproc)}  # FUZZ_JOBS: fewer, to leave cores to other work
status=0
total=0
for t in "${targets[@]}"; do
  bin="$build/fuzz-$t"
  [ -x "$bin" ] || { echo "missing $bin (make fuzz builds it)" >&2; exit 2; }
  findings="$build/fuzz-findings/$t"
  logs="$build/fuzz-logs/$t"
  mkdir -p "$findings" "$logs" "$build/fuzz-corpus/$t"
  rm -f "$logs"/*.log
  # -fork keeps fuzzing past a finding, each job in its own process; rss/malloc limits turn an
  # allocation onnxdbg should have refused into a finding.
  (cd "$logs" && "$bin" -fork="$jobs" -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 \
      -max_total_time="$seconds" -timeout=20 -rss_limit_mb=3072 -malloc_limit_mb=2048 \
      -max_len=262144 -artifact_prefix="$findings/" -print_final_stats=1 \
      "$build/fuzz-corpus/$t" >"$logs/fuzz.log" 2>&1) || true
  # The parent's status lines read "#EXECUTIONS: cov: .. oom/timeout/crash: O/T/C time: ..".
  last=$(grep -E '^#[0-9]+: cov:' "$logs/fuzz.log" | tail -1 || true)
  runs=$(echo "$last" | sed -n 's/^#\([0-9]*\):.*/\1/p')
  runs=${runs:-0}
  found=$(find "$findings" -type f | wc -l)
  echo "fuzz $t: $runs executions in $seconds s ($(echo "$last" | grep -o 'oom/timeout/crash: [0-9/]*' || echo 'no status line')), $found finding(s) in $findings"
  total=$((total + runs))
  [ "$found" -eq 0 ] || status=1
done
echo "fuzz: $total executions in total"
exit $status
