#!/usr/bin/env bash
# Hostile models through the real binary (issue 17): each gets one error sentence in onnxdbg's
# words and the right exit status, never a crash or a library's exception text. Mutated
# attributes (a LayerNormalization axis of 2^31, an op changed to Scan without its body) under
# lint, view and inspect; `run` on a malformed model exits 2 while a backend refusing a valid one
# exits 1 (sparse initializers on the reference backend); a negative external-data length; 40
# nested Ifs; a run report whose fields have the wrong JSON types. The models are protobuf text
# encoded here, so the repository ships no binary.
# usage: hostile.sh ONNXDBG MODELS_DIR
set -uo pipefail
bin=$(realpath -m "$1")
source "$(dirname "$0")/common/onnx_proto.sh"
source "$(dirname "$0")/common/setup.sh"  # last: it changes the working directory
if [ "$protoc_ok" != 1 ]; then
  echo "FAIL: protoc or onnx.proto missing (scripts/install-deps.sh installs them)"
  exit 1
fi
encode() { encode_onnx_text "$tmp/$1.txtpb" "$tmp/$1.onnx"; }  # encode NAME: NAME.txtpb -> .onnx
# A float tensor type of the given dims: vt 2 3 -> type { ... dim 2, dim 3 ... }
vt() {
  local d=""
  for n in "$@"; do d="$d dim { dim_value: $n }"; done
  echo "type { tensor_type { elem_type: 1 shape {$d } } }"
}
# Runs onnxdbg; sets rc, out (stdout+stderr); a crash is a signal exit status (>= 128).
od() { out=$("$bin" "$@" 2>&1); rc=$?; }
no_crash() { [ "$rc" -lt 128 ] && ! grep -qi "json.exception\|terminate called\|what():" <<<"$out"; }

cat > axis.txtpb <<PB
ir_version: 8 opset_import { domain: "" version: 17 }
graph { name: "g" input { name: "x" $(vt 2 3) }
  initializer { name: "s" dims: 3 data_type: 1 float_data: [1, 1, 1] }
  node { name: "ln" op_type: "LayerNormalization" input: ["x", "s"] output: "y"
         attribute { name: "axis" type: INT i: 2147483648 } }
  output { name: "y" $(vt 2 3) } }
PB
cat > scan.txtpb <<PB
ir_version: 8 opset_import { domain: "" version: 17 }
graph { name: "g" input { name: "x" $(vt 2 3) }
  node { name: "sc" op_type: "Scan" input: "x" output: "y"
         attribute { name: "num_scan_inputs" type: INT i: 1 } }
  output { name: "y" $(vt 2 3) } }
PB
encode axis && encode scan
od lint axis.onnx
check "lint, axis 2^31: exit 1, no crash" '[ $rc -eq 1 ] && no_crash'
check "lint, axis 2^31: names the node and the axis" 'grep -q "LayerNormalization .ln.*axis 2147483648 is out of range" <<<"$out"'
od lint scan.onnx
check "lint, Scan without body: exit 1, no crash" '[ $rc -eq 1 ] && no_crash'
check "lint, Scan without body: the missing attribute" 'grep -q "Scan .sc.*required attribute .body." <<<"$out"'
for m in axis scan; do
  od view "$m.onnx" -o "$tmp/$m.html" --lint
  check "view --lint $m: exit 0, no crash" '[ $rc -eq 0 ] && no_crash && [ -s "$tmp/$m.html" ]'
  od inspect "$m.onnx" --mode attrs
  check "inspect --mode attrs $m: exit 0, no crash" '[ $rc -eq 0 ] && no_crash'
  od run "$m.onnx" --backends reference
  check "run $m (malformed): exit 2, a model error naming the node" \
    '[ $rc -eq 2 ] && no_crash && grep -q "^onnxdbg: error: the model is malformed.*node" <<<"$out"'
done

# A structural error the ONNX checker rejects: 'relu' reads 'x1', which nothing defines.
cat > undefined.txtpb <<PB
ir_version: 8 opset_import { domain: "" version: 13 }
graph { name: "g" input { name: "x" $(vt 2) }
  node { name: "relu" op_type: "Relu" input: "x1" output: "y" }
  output { name: "y" $(vt 2) } }
PB
encode undefined
od run undefined.onnx --backends reference
check "run, undefined input: exit 2 (model error, not 'backend failed')" '[ $rc -eq 2 ]'
check "run, undefined input: one sentence naming node and input" \
  '[ "$(wc -l <<<"$out")" -eq 1 ] && grep -q "#0 Relu .relu.: input 0 .x1. is not produced" <<<"$out"'

# An initializer with negative dims: a lint error on its reader, and a model error for run.
cat > negative.txtpb <<PB
ir_version: 8 opset_import { domain: "" version: 13 }
graph { name: "g" input { name: "x" $(vt 2) }
  initializer { name: "b" dims: [-2, -3] data_type: 1 }
  node { name: "add" op_type: "Add" input: ["x", "b"] output: "y" }
  output { name: "y" $(vt 2) } }
PB
encode negative
od lint negative.onnx
check "lint, negative initializer dims: exit 1, named on node 'add'" \
  '[ $rc -eq 1 ] && grep -q "Add .add.  *initializer .b. has dims \[-2, -3\]" <<<"$out"'
od run negative.onnx --backends reference
check "run, negative initializer dims: exit 2" '[ $rc -eq 2 ] && grep -q "has dims \[-2, -3\]" <<<"$out"'

# A valid model the reference backend refuses: exit 1, in our words.
cat > sparse.txtpb <<PB
ir_version: 8 opset_import { domain: "" version: 13 }
graph { name: "g" input { name: "x" $(vt 4) }
  sparse_initializer { dims: 4
    values { name: "b" dims: 1 data_type: 1 float_data: [5] }
    indices { name: "b_i" dims: 1 data_type: 7 int64_data: [2] } }
  node { name: "add" op_type: "Add" input: ["x", "b"] output: "y" }
  output { name: "y" $(vt 4) } }
PB
encode sparse
od run sparse.onnx --backends reference
check "run, sparse initializer on reference: exit 1 (backend refused)" '[ $rc -eq 1 ]'
check "run, sparse initializer: 'not supported by the reference interpreter'" \
  'grep -q "sparse initializers are not supported by the reference interpreter (sparse initializer .b." <<<"$out"'
check "run, sparse initializer: not called undefined" '! grep -q "undefined" <<<"$out"'
od inspect sparse.onnx --mode weights
check "inspect --mode weights, sparse initializer: exit 0 with a warning saying so" \
  '[ $rc -eq 0 ] && grep -q "not supported by inspect --mode weights" <<<"$out"'

# Issue 39: malformed models whose runs exited 1 ("could not run on reference (load)") and whose
# lint passed: each is a lint error now, and `run` stops with exit 2 naming it.
# fn_model NAME FUNCTIONS: a model whose one node calls local.f, with the functions given (text).
fn_model() {
  cat > "$1.txtpb" <<PB
ir_version: 8 opset_import { domain: "" version: 13 } opset_import { domain: "local" version: 1 }
graph { name: "g" input { name: "x" $(vt 2) }
  node { name: "call" op_type: "f" domain: "local" input: "x" output: "y" }
  output { name: "y" $(vt 2) } }
$2
PB
}
# fn NAME NODES: a local function NAME (domain local) of input a and output b.
fn() {
  echo "functions { name: \"$1\" domain: \"local\" input: \"a\" output: \"b\"
  opset_import { domain: \"\" version: 13 } opset_import { domain: \"local\" version: 1 } $2 }"
}
# A local function calling a function of its domain that does not exist; one calling itself; two
# calling each other.
fn_model fn_undefined "$(fn f 'node { op_type: "missing" domain: "local" input: "a" output: "b" }')"
fn_model fn_self "$(fn f 'node { op_type: "f" domain: "local" input: "a" output: "b" }')"
fn_model fn_mutual "$(fn f 'node { op_type: "Relu" input: "a" output: "r" }
  node { op_type: "g" domain: "local" input: "r" output: "b" }')
$(fn g 'node { op_type: "f" domain: "local" input: "a" output: "b" }')"
# A node whose output name was emptied, read by the next node through an empty input.
cat > empty_output.txtpb <<PB
ir_version: 8 opset_import { domain: "" version: 13 }
graph { name: "g" input { name: "x" $(vt 2) }
  node { name: "relu" op_type: "Relu" input: "x" output: "" }
  node { name: "neg" op_type: "Neg" input: "" output: "y" }
  output { name: "y" $(vt 2) } }
PB
# A sparse initializer whose index 9 lies outside its 4 elements.
cat > sparse_range.txtpb <<PB
ir_version: 8 opset_import { domain: "" version: 13 }
graph { name: "g" input { name: "x" $(vt 4) }
  sparse_initializer { dims: 4
    values { name: "b" dims: 1 data_type: 1 float_data: [5] }
    indices { name: "b_i" dims: 1 data_type: 7 int64_data: [9] } }
  node { name: "add" op_type: "Add" input: ["x", "b"] output: "y" }
  output { name: "y" $(vt 4) } }
PB
declare -A want=(
  [fn_undefined]="function 'f' (domain 'local') calls 'missing' of domain 'local', which is not a function of this model"
  [fn_self]="function 'f' (domain 'local') calls itself;"
  [fn_mutual]="function 'f' (domain 'local') calls itself through 'g' -> 'f'"
  [empty_output]="input 0 ('X') is required but its name is empty.*#0 Relu 'relu' has an output with an empty name too"
  [sparse_range]="sparse initializer 'b' of dims \\[4\\] has index 9 (value 0) outside its 4 elements"
)
for m in fn_undefined fn_self fn_mutual empty_output sparse_range; do
  encode "$m"
  od lint "$m.onnx"
  check "lint $m: exit 1, no crash" '[ $rc -eq 1 ] && no_crash'
  check "lint $m: names it" 'grep -q "${want[$m]}" <<<"$out"'
  od run "$m.onnx" --backends reference
  check "run $m: exit 2, one sentence naming it" \
    '[ $rc -eq 2 ] && no_crash && [ "$(wc -l <<<"$out")" -eq 1 ] && grep -q "^onnxdbg: error: the model is malformed.*${want[$m]}" <<<"$out"'
  od run "$m.onnx" --backends reference --json
  check "run $m --json: exit 2, a model_error object" '[ $rc -eq 2 ] && grep -q "\"model_error\"" <<<"$out"'
done

# External data with a negative length.
cat > external.txtpb <<PB
ir_version: 8 opset_import { domain: "" version: 13 }
graph { name: "g" input { name: "x" $(vt 2) }
  initializer { name: "b" dims: 2 data_type: 1 data_location: EXTERNAL
    external_data { key: "location" value: "w.bin" } external_data { key: "length" value: "-8" } }
  node { name: "add" op_type: "Add" input: ["x", "b"] output: "y" }
  output { name: "y" $(vt 2) } }
PB
encode external
head -c 8 /dev/zero > w.bin
od inspect external.onnx --mode weights
check "inspect --mode weights, negative external length: exit 2" '[ $rc -eq 2 ]'
check "... naming the tensor and the length" 'grep -q "tensor .b. has external data length .-8." <<<"$out"'

# 40 nested Ifs: beyond protobuf's nesting limit, but not corrupted.
leaf="name: \"leaf\" node { op_type: \"Identity\" input: \"x\" output: \"o0\" } output { name: \"o0\" $(vt 1) }"
g=$leaf
for ((d = 1; d <= 40; d++)); do
  io=""
  [ $d -eq 40 ] && io="input { name: \"c\" type { tensor_type { elem_type: 9 shape { } } } } input { name: \"x\" $(vt 1) }"
  g="name: \"g$d\" $io node { op_type: \"If\" input: \"c\" output: \"o$d\"
    attribute { name: \"then_branch\" type: GRAPH g { $g } }
    attribute { name: \"else_branch\" type: GRAPH g { name: \"e$d\"
      node { op_type: \"Identity\" input: \"x\" output: \"e$d\" } output { name: \"e$d\" $(vt 1) } } } }
    output { name: \"o$d\" $(vt 1) }"
done
echo "ir_version: 8 opset_import { domain: \"\" version: 13 } graph { $g }" > nested.txtpb
encode nested
od lint nested.onnx
check "lint, 40 nested Ifs: exit 2" '[ $rc -eq 2 ]'
check "... 'nests subgraphs 40 deep', not 'truncated'" \
  'grep -q "nests subgraphs (If/Loop/Scan bodies) 40 deep, deeper than the 32" <<<"$out" && ! grep -q truncated <<<"$out"'

# A test-data folder whose set number overflows (was "onnxdbg: error: stol").
cat > relu.txtpb <<PB
ir_version: 8 opset_import { domain: "" version: 13 }
graph { name: "g" input { name: "x" $(vt 2) }
  node { name: "relu" op_type: "Relu" input: "x" output: "y" }
  output { name: "y" $(vt 2) } }
PB
encode relu
mkdir -p td/test_data_set_12345678901234567890 td/test_data_set_0
od run relu.onnx --backends reference --load-inputs td
check "--load-inputs, set number of 20 digits: exit 2, no std::stol text" \
  '[ $rc -eq 2 ] && ! grep -q "stol" <<<"$out" && no_crash'

# A run report whose fields have the wrong JSON types.
echo '{"verdict": 3, "verdict_line": [], "comparisons": [{"output": "y", "backend": 1, "pass": "no"}],
       "layerwise": [7, {"tensor": "y", "pass": null}]}' > report.json
od view undefined.onnx -o report.html --report report.json
check "view --report with mistyped fields: exit 0, no JSON exception" '[ $rc -eq 0 ] && no_crash'
echo '{"samples": [5, {"verdict": false, "layerwise": 3}]}' > samples.json
od view undefined.onnx -o samples.html --report samples.json
check "view --report with mistyped samples: exit 0, no JSON exception" '[ $rc -eq 0 ] && no_crash'
exit $fail
