#!/usr/bin/env bash
# Hostile models through the real binary (issue 17 items 6 and 9), under `ulimit -v` of 4 GB so
# that a real allocation of a huge tensor would fail differently: a declared input of
# [100000,100000,100] or [2147483647,2147483647] floats exits 2 with one sentence naming it and
# nothing allocated; --max-memory lowers the limit; a Loop of 2^62 trips with --timeout 2 ends
# within seconds as failed rows "timed out after 2 s" (the reference in process, onnxruntime's
# worker killed); an AveragePool with kernel_shape [2, 2^62] is refused before it starts.
# usage: limits.sh ONNXDBG MODELS_DIR
set -uo pipefail
bin=$(realpath -m "$1")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"  # whatever onnxdbg writes by default into the current folder goes there too
fail=0
check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi; }
if ! command -v protoc >/dev/null || [ ! -f /usr/include/onnx/onnx.proto ]; then
  echo "SKIP: protoc or /usr/include/onnx/onnx.proto missing"
  exit 0
fi
# encode NAME: protobuf text on stdin -> NAME.onnx
encode() {
  protoc --encode=onnx.ModelProto -I/usr/include /usr/include/onnx/onnx.proto > "$tmp/$1.onnx"
}
# identity_model NAME DIMS...: y = Identity(x), x float[DIMS]
identity_model() {
  local name=$1 dims=""
  shift
  for d in "$@"; do dims+=" dim { dim_value: $d }"; done
  encode "$name" <<PB
ir_version: 8
opset_import { domain: "" version: 13 }
graph {
  name: "$name"
  input { name: "x" type { tensor_type { elem_type: 1 shape {$dims } } } }
  node { name: "id" op_type: "Identity" input: "x" output: "y" }
  output { name: "y" type { tensor_type { elem_type: 1 shape {$dims } } } }
}
PB
}
# limited CMD...: runs CMD with at most 4 GB of address space; stdout+stderr in $out, $rc
# (AddressSanitizer reserves terabytes of shadow address space: under `make test-sanitize`, whose
# ASAN_OPTIONS is set, its allocator_may_return_null and the binary's own checks stand in.)
if [ -n "${ASAN_OPTIONS:-}" ]; then
  limited() { out=$("$@" 2>&1); rc=$?; echo "$out"; }
else
  limited() { out=$( (ulimit -v 4000000; "$@") 2>&1); rc=$?; echo "$out"; }
fi
# unlimited CMD...: as limited, without the limit (ONNX Runtime's worker reserves more)
unlimited() { out=$("$@" 2>&1); rc=$?; echo "$out"; }
one_error_line() { [ "$(grep -c "^onnxdbg: error:" <<<"$out")" -eq 1 ] && [ "$(wc -l <<<"$out")" -eq 1 ]; }

identity_model huge 100000 100000 100
limited "$bin" run huge.onnx --backends reference
check "huge input exits 2" '[ $rc -eq 2 ]'
check "huge input: one sentence naming it and its size" 'one_error_line && grep -q "input '"'"'x'"'"' float32\[100000,100000,100\] needs 3.64 TiB, more than the memory limit of .* (--max-memory)" <<<"$out"'
check "huge input: no bad_alloc" '! grep -q "bad_alloc" <<<"$out"'

identity_model intmax 2147483647 2147483647
limited "$bin" run intmax.onnx --backends reference,onnxruntime
check "[2147483647,2147483647] exits 2" '[ $rc -eq 2 ]'
check "[2147483647,2147483647]: one sentence naming it" 'one_error_line && grep -q "input '"'"'x'"'"' float32\[2147483647,2147483647\] needs .*(--max-memory)" <<<"$out"'
check "[2147483647,2147483647]: no bad_alloc" '! grep -q "bad_alloc" <<<"$out"'

identity_model small 1000 1000
limited "$bin" run small.onnx --backends reference --max-memory 1MB
check "--max-memory 1MB refuses a 4 MB input" '[ $rc -eq 2 ] && grep -q "input '"'"'x'"'"' float32\[1000,1000\] needs 3.81 MiB, more than the memory limit of 977 KiB (--max-memory)" <<<"$out"'
limited "$bin" run small.onnx --backends reference --max-memory lots
check "--max-memory lots: usage error naming the option" '[ $rc -eq 2 ] && grep -q -- "--max-memory" <<<"$out"'
limited "$bin" run small.onnx --backends reference --max-memory 64MB
check "--max-memory 64MB runs a 4 MB model" '[ $rc -eq 0 ]'

encode spin <<'PB'
ir_version: 8
opset_import { domain: "" version: 13 }
graph {
  name: "spin"
  input { name: "x" type { tensor_type { elem_type: 1 shape { dim { dim_value: 1 } } } } }
  initializer { name: "trips" data_type: 7 int64_data: 4611686018427387904 }
  initializer { name: "cond" data_type: 9 int32_data: 1 }
  node {
    name: "loop" op_type: "Loop" input: "trips" input: "cond" input: "x" output: "y"
    attribute {
      name: "body" type: GRAPH
      g {
        name: "body"
        input { name: "i" type { tensor_type { elem_type: 7 shape { } } } }
        input { name: "c_in" type { tensor_type { elem_type: 9 shape { } } } }
        input { name: "a_in" type { tensor_type { elem_type: 1 shape { dim { dim_value: 1 } } } } }
        node { op_type: "Identity" input: "c_in" output: "c_out" }
        node { op_type: "Identity" input: "a_in" output: "a_out" }
        output { name: "c_out" type { tensor_type { elem_type: 9 shape { } } } }
        output { name: "a_out" type { tensor_type { elem_type: 1 shape { dim { dim_value: 1 } } } } }
      }
    }
  }
  output { name: "y" type { tensor_type { elem_type: 1 shape { dim { dim_value: 1 } } } } }
}
PB
start=$SECONDS
limited timeout 60 "$bin" run spin.onnx --backends reference --timeout 2
check "Loop of 2^62 trips, --timeout 2: ends within 10 s" '[ $((SECONDS - start)) -le 10 ] && [ $rc -ne 124 ]'
check "Loop of 2^62 trips: exit 1 (a failed row)" '[ $rc -eq 1 ]'
check "Loop of 2^62 trips: timed out after 2 s" 'grep -q "timed out after 2 s" <<<"$out"'
if [ -x "$(dirname "$bin")/onnxdbg-worker" ]; then
  start=$SECONDS
  unlimited timeout 60 "$bin" run spin.onnx --backends reference,onnxruntime --timeout 2 --json
  check "--timeout 2 stops onnxruntime's worker too (within 15 s)" '[ $((SECONDS - start)) -le 15 ] && [ $rc -eq 1 ]'
  check "both rows failed" '[ "$(grep -c "timed out after 2 s\|within 2 s" <<<"$out")" -ge 2 ]'
fi

encode pool <<'PB'
ir_version: 8
opset_import { domain: "" version: 13 }
graph {
  name: "pool"
  input { name: "x" type { tensor_type { elem_type: 1 shape { dim { dim_value: 1 } dim { dim_value: 1 } dim { dim_value: 4 } dim { dim_value: 4 } } } } }
  node {
    name: "pool" op_type: "AveragePool" input: "x" output: "y"
    attribute { name: "kernel_shape" type: INTS ints: 2 ints: 4611686018427387904 }
    attribute { name: "auto_pad" type: STRING s: "SAME_UPPER" }
  }
  output { name: "y" type { tensor_type { elem_type: 1 } } }
}
PB
start=$SECONDS
limited timeout 60 "$bin" run pool.onnx --backends reference
check "AveragePool kernel_shape [2, 2^62]: ends at once" '[ $((SECONDS - start)) -le 10 ] && [ $rc -eq 1 ]'
check "AveragePool kernel_shape [2, 2^62]: refused before running, naming the node" 'grep -q "node '"'"'pool'"'"' (AveragePool): kernel_shape \[2, 4611686018427387904\].*refused before running" <<<"$out"'

exit $fail
