// The ONNX protobuf messages (onnx/onnx_pb.h) under the name `onnx`.
//
// onnxdbg links the ONNX C++ library that scripts/install-deps.sh builds from the onnx source
// distribution with ONNX_NAMESPACE=onnx_onnxdbg, so that its classes, its registries and its
// .proto file names cannot collide with another ONNX loaded into the same process (PyTorch loads
// Debian's libonnx 1.12; two copies of "onnx/onnx-ml.proto" in one protobuf pool abort the
// process). Every onnxdbg file reaches ONNX through this header and writes `onnx::ModelProto`.
#pragma once

#include "onnx/onnx_pb.h"

#ifndef ONNX_NAMESPACE
#error "ONNX_NAMESPACE is not defined: link the ONNX::onnx target of scripts/install-deps.sh"
#endif

namespace onnx = ONNX_NAMESPACE;
