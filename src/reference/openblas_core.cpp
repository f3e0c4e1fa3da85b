// OpenBLAS picks its kernels (its "core") from the CPU's vendor, family and model when it loads.
// On a model newer than its release it falls back to its generic Prescott (SSE3) kernels: Debian
// 12's OpenBLAS 0.3.21 does so on Intel's Emerald Rapids, where the reference's float Conv ran
// 2.5x slower than with SkylakeX's kernels (bench/quant.sh's float16 CNN, one thread: 187 ms
// against 72 ms; a 512x512 sgemm: 6x). OPENBLAS_CORETYPE chooses the core, but OpenBLAS reads it
// only while it initializes, when the process loads it: the executables set it and start again.
// Restarting OpenBLAS in place (its exported gotoblas_quit / gotoblas_init) is not safe: its
// buffers are freed a second time at exit, which crashed Python after torch had used OpenBLAS.
#include "reference/openblas_core.h"

#include <unistd.h>

#include <cstdlib>

extern "C" char* openblas_get_corename(void);

namespace onnxdbg::reference {

std::string openblas_core_name() {
  const char* name = openblas_get_corename();
  return name != nullptr ? name : "";
}

const char* better_openblas_core() {
  if (std::getenv("OPENBLAS_CORETYPE") != nullptr || openblas_core_name() != "Prescott")
    return nullptr;
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl"))
    return "SkylakeX";
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "Haswell";
#endif
  return nullptr;
}

void restart_with_better_openblas_core(char** argv) {
  const char* core = better_openblas_core();
  if (core == nullptr || argv == nullptr || argv[0] == nullptr) return;
  // The executable's own path, not /proc/self/exe, which would rename the process "exe" (ps, top).
  char path[4096];
  const ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
  if (n <= 0 || static_cast<size_t>(n) >= sizeof path - 1) return;
  path[n] = '\0';
  setenv("OPENBLAS_CORETYPE", core, 1);
  execv(path, argv);
  unsetenv("OPENBLAS_CORETYPE");  // the exec failed: go on with the kernels there are
}

}  // namespace onnxdbg::reference
