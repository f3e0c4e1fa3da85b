// float32 values of float16 operands, for kernels that compute float16 in float32 themselves
// (HalfMode::kNativeFloat16: MatMul, Gemm) instead of taking whole-tensor casts from the
// interpreter: a constant input (a weight) is converted on the first run and the copy kept as the
// node's KernelState; other inputs are converted on every run into the kernel's own buffer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "onnxdbg/dtype.h"
#include "onnxdbg/tensor.h"
#include "reference/kernel.h"

namespace onnxdbg::reference {

/// A float16 constant's values in float32, kept from run to run (float32_values).
struct Float32Copy : KernelState {
  const std::byte* source = nullptr;  ///< the float16 values converted (t.raw())
  std::vector<float> values;          ///< one per element, exact (float16 -> float32 loses nothing)
};

/// The values of `t` (float16; input `input` of ctx's node) in float32, t.numel() of them in t's
/// order, each exact: the node's kept copy when `t` is a constant input (made and kept on its
/// first run, within KernelStates' budget; one input per node, the first asked for), else
/// converted now (F16C where the CPU has it) into `scratch`, which the pointer then points into.
/// The same bits as the interpreter's whole-tensor cast to float32. Throws std::bad_alloc as
/// operator new.
inline const float* float32_values(KernelContext& ctx, const Tensor& t, size_t input,
                                   std::vector<float>& scratch) {
  const auto n = static_cast<size_t>(t.numel());
  const auto* bits = reinterpret_cast<const uint16_t*>(t.raw());
  if (ctx.input_is_constant(input)) {
    const auto* kept = dynamic_cast<const Float32Copy*>(ctx.state());
    if (kept && kept->source == t.raw() && kept->values.size() == n) return kept->values.data();
    if (!ctx.state() && ctx.can_keep_state(n * sizeof(float))) {
      auto copy = std::make_unique<Float32Copy>();
      copy->source = t.raw();
      copy->values.resize(n);
      float16_to_float(bits, copy->values.data(), n);
      const float* values = copy->values.data();
      if (ctx.keep_state(std::move(copy), n * sizeof(float))) return values;
    }
  }
  scratch.resize(n);
  float16_to_float(bits, scratch.data(), n);
  return scratch.data();
}

}  // namespace onnxdbg::reference
