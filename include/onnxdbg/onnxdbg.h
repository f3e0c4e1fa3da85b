// onnxdbg's public C++ API, all of it: one call per capability, each taking an options struct
// and returning a result struct that the CLI and the Python package render (text, JSON, HTML).
// Link onnxdbg::onnxdbg (find_package(onnxdbg)); examples/compare.cpp shows a whole program.
#pragma once

#include "onnxdbg/batch.h"              // batch (many models x commands, local or on Ray)
#include "onnxdbg/bisect_optimizers.h"  // bisect_optimizers (ONNX Runtime's graph optimizations)
#include "onnxdbg/common.h"             // CallContext (progress, cancellation), Messages
#include "onnxdbg/conformance.h"        // conformance (ONNX backend test cases)
#include "onnxdbg/data.h"               // data_to_input (merge data files)
#include "onnxdbg/diff.h"               // diff
#include "onnxdbg/inspect.h"            // inspect, lint
#include "onnxdbg/model.h"              // Model (a loaded model), ModelInfo
#include "onnxdbg/options.h"            // option_schema, option_defaults (options.def)
#include "onnxdbg/reduce.h"             // reduce
#include "onnxdbg/run.h"                // run (compare backends, layerwise, isolate)
#include "onnxdbg/surgeon.h"            // surgeon (sanitize, extract, convert-opset, to-fp16)
#include "onnxdbg/view.h"               // view (the HTML page)
