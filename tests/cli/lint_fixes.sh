#!/usr/bin/env bash
# Every command `onnxdbg lint` suggests as a fix works: on each model of `make-broken-models
# --lint-fixes` (tools/make_broken_models.cpp) and the broken variants of a public model, every
# `onnxdbg ...` command quoted in a finding is run exactly as a user would paste it (in the folder
# lint ran in, the model named as lint was given it); it must exit 0 and its output must lint with
# no errors, so the finding is gone. Models no command can fix must name none, and say in words
# what to do. The reported case (issue 19: opset 9 declared, opset-11 forms of Clip, Resize and
# Pad used) gets `surgeon set-opset --opset 11`, which declares the opset its nodes were written
# for, and the convert-opset command lint used to suggest fails.
# usage: lint_fixes.sh ONNXDBG MODELS_DIR
set -uo pipefail
bin=$(realpath -m "$1") models=$(realpath -m "$2")
tool="$(dirname "$bin")/make-broken-models"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
fail=0
check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fail=1; return 1; fi; }
onnxdbg() { "$bin" "$@"; }  # what a user's `onnxdbg` on PATH would run

# The commands quoted in lint --json's messages, one per line: "rule<TAB>command".
commands_of() {
  python3 -c '
import json, re, sys
for f in json.load(sys.stdin)["findings"]:
    for c in re.findall(r"`([^`]*)`", f["message"]):
        print(f["rule"] + "\t" + c)'
}
# The -o argument of a command line, as the shell would split it.
output_of() {
  python3 -c '
import shlex, sys
w = shlex.split(sys.argv[1])
print(w[w.index("-o") + 1])' "$1"
}

# Lints MODEL (a path relative to the current folder; `lint -- MODEL` when MODEL starts with '-'),
# runs each command it suggests and checks it; the number of commands goes to $tmp/count.
try_fixes() {
  local model=$1 n=0 rule cmd out rc
  "$bin" lint --json -- "$model" > "$tmp/lint.json" 2>/dev/null
  while IFS=$'\t' read -r rule cmd; do
    n=$((n + 1))
    check "$model: a quoted text is an onnxdbg command: $cmd" '[[ "$cmd" == "onnxdbg "* ]]' || continue
    out=$(output_of "$cmd")
    rm -f "$out"
    eval "$cmd" > "$tmp/cmd.log" 2>&1; rc=$?
    check "$model: '$cmd' exits 0" '[ $rc -eq 0 ]' || { cat "$tmp/cmd.log"; continue; }
    "$bin" lint "$out" --json > "$tmp/after.json" 2>/dev/null; rc=$?
    check "$model ($rule): the result lints without errors" '[ $rc -eq 0 ]' || "$bin" lint "$out"
    check "$model: the $rule finding is gone" '! grep -q "\"rule\": \"$rule\"" "$tmp/after.json"'
  done < <(commands_of < "$tmp/lint.json")
  echo "$n" > "$tmp/count"
}
count() { cat "$tmp/count"; }

if [ ! -x "$tool" ]; then
  echo "FAIL: $tool not built"
  exit 1
fi
"$tool" --lint-fixes "$tmp/m" > /dev/null || { echo "FAIL: make-broken-models --lint-fixes"; exit 1; }

cd "$tmp/m"
# model:rule:commands (how many quoted commands lint must suggest)
for spec in out_of_order:use_before_definition:1 out_of_order_subgraph:use_before_definition:1 \
            group_norm_18:op_not_in_opset:1 out_of_order_and_bad_attribute:use_before_definition:0 \
            group_norm_18_out_of_order:use_before_definition:0 \
            cycle:use_before_definition:0 opset11_forms:op_not_in_opset:1 \
            resize10_form:op_not_in_opset:1 upsample_10:op_not_in_opset:1 \
            scatter_11:op_not_in_opset:1; do
  IFS=: read -r name rule want <<<"$spec"
  "$bin" lint "$name.onnx" --json > "$tmp/first.json" 2>/dev/null; rc=$?
  check "$name.onnx: lint exits 1 with $rule" '[ $rc -eq 1 ] && grep -q "\"rule\": \"$rule\"" "$tmp/first.json"'
  try_fixes "$name.onnx"
  check "$name.onnx: lint suggests $want command(s)" '[ "$(count)" -eq "$want" ]'
done

# The reported case: the fix declares the opset the model's forms need, and the command the old
# message named fails, as it always did.
msg=$("$bin" lint opset11_forms.onnx 2>&1)
check "opset11_forms.onnx: says to declare opset 11" \
  'grep -q "surgeon set-opset opset11_forms.onnx --opset 11 " <<<"$msg"'
check "opset11_forms.onnx: names Clip and Pad, which use opset-11 forms too" \
  'grep -q "#0 Clip, #2 Pad also have forms newer than opset 9" <<<"$msg"'
onnxdbg surgeon convert-opset opset11_forms.onnx --opset 10 -o never.onnx > /dev/null 2>&1; rc=$?
check "convert-opset --opset 10 fails on it (why lint no longer suggests it)" '[ $rc -eq 2 ] && [ ! -f never.onnx ]'
msg=$("$bin" lint resize10_form.onnx 2>&1)
check "resize10_form.onnx: says to declare opset 10" \
  'grep -q "surgeon set-opset resize10_form.onnx --opset 10 " <<<"$msg"'
msg=$("$bin" lint cycle.onnx 2>&1)
check "cycle.onnx: names the cycle" 'grep -q "form a cycle" <<<"$msg"'
msg=$("$bin" lint upsample_10.onnx 2>&1)
check "upsample_10.onnx: names the replacement" 'grep -q "replace it with Resize" <<<"$msg"'

# Paths a shell must quote, and a model in another folder: the command stays copy-pasteable.
mkdir -p "$tmp/odd dir"
cp out_of_order.onnx "$tmp/odd dir/it's here.onnx"
cp group_norm_18.onnx "$tmp/odd dir/-dash.onnx"
cd "$tmp"
try_fixes "odd dir/it's here.onnx"
check "a path with a space and a quote: one command, and it worked" '[ "$(count)" -eq 1 ]'
check "its output sits next to it" '[ -f "odd dir/it'"'"'s here.sorted.onnx" ]'
cd "$tmp/odd dir"
try_fixes "-dash.onnx"  # `lint -- -dash.onnx`: the command names it ./-dash.onnx
check "a path starting with '-': one command, and it worked" '[ "$(count)" -eq 1 ]'

# The broken variants of a real model (when the public models were fetched): whatever lint
# suggests for them works.
if [ -f "$models/.verified" ]; then
  "$tool" "$models/ch_PP-OCRv4_det_infer.onnx" "$tmp/det" > /dev/null 2>&1
  cd "$tmp/det"
  for name in truncated undefined_input low_opset; do
    try_fixes "$name.onnx"
    echo "     $name.onnx: $(count) command(s) suggested"
  done
  try_fixes out_of_order.onnx
  check "det out_of_order.onnx: toposort suggested" '[ "$(count)" -eq 1 ]'
else
  echo "SKIP public models: not fetched"
fi
exit $fail
