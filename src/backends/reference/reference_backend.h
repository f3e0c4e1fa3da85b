// The reference backend: onnxdbg's own interpreter, run in this process (it is our code and
// needs nothing but our own build).
#pragma once

#include <memory>

#include "backends/backend.h"
#include "reference/interpreter.h"

namespace onnxdbg {

/// Creates the reference backend. Its options (profile, random_seed, accumulate, threads; see
/// backend_docs) are read by reference_options when a model is loaded; unknown options are
/// refused by validate_backend_spec before this is called.
std::unique_ptr<Backend> make_reference_backend(const BackendSpec& spec);

/// The interpreter options a reference backend spec asks for: profile=0|1, random_seed=N (>= 0),
/// accumulate=float|double, threads=N (1..256, or auto: reference::default_thread_count();
/// default 1: on small models waking a second thread costs more than it saves).
/// Errors: kInvalidArgument naming the option and the value refused.
Expected<reference::InterpreterOptions> reference_options(const BackendSpec& spec);

}  // namespace onnxdbg
