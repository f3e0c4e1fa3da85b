# Sourced by CLI test scripts that write models from protobuf text (protoc --encode): sets
# onnx_proto_root to the include root holding onnx/onnx.proto, from libonnx-dev (/usr/include) or
# from Debian's python3-onnx, which scripts/install-deps.sh installs (the build itself uses ONNX
# 1.23 from PyPI, whose .proto is not installed); empty, with protoc_ok=0, when protoc or the file
# is missing, which the script reports as a failure, not a skip.
onnx_proto_root=""
for d in /usr/include /usr/lib/python3/dist-packages; do
  if [ -f "$d/onnx/onnx.proto" ]; then onnx_proto_root=$d; break; fi
done
protoc_ok=0
if command -v protoc >/dev/null && [ -n "$onnx_proto_root" ]; then protoc_ok=1; fi

# encode_onnx_text IN OUT: the ModelProto in protobuf text IN, written binary to OUT.
encode_onnx_text() {
  protoc --encode=onnx.ModelProto -I"$onnx_proto_root" "$onnx_proto_root/onnx/onnx.proto" \
    <"$1" >"$2"
}
