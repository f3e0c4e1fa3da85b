#!/usr/bin/env bash
# bench/quant.sh BUILD_DIR [bench_models options]: the quantized-kernel benchmark (issue 19, item
# 2). Writes make-quant-models' models (an int8 U-Net in onnxruntime.quantization's dynamic form,
# a QLinearConv encoder, a MatMulInteger/QLinearMatMul MLP and a float16 CNN) into
# BUILD_DIR/bench-quant and runs bench_models on them: median run time of the reference and ONNX
# Runtime, one thread each, and the ratio reference / ONNX Runtime (vs_ort). Target: <= 3x on the
# quantized CNNs.
set -euo pipefail
build=$1
shift
out="$build/bench-quant"
cmake --build "$build" --target make-quant-models bench_models onnxdbg-worker >/dev/null
"$build/make-quant-models" "$out"
echo "quantized models (bench/quant.sh): reference vs ONNX Runtime, one thread each"
"$build/bench_models" --backends onnxruntime:threads=1,reference:threads=1 "$@" "$out" \
  "$out/models.txt"
