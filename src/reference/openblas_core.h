// Which kernels ("core") OpenBLAS uses for the reference's GEMMs; see openblas_core.cpp.
#pragma once

#include <string>

namespace onnxdbg::reference {

/// The kernels OpenBLAS uses ("SkylakeX", "Haswell", "Prescott"...), as openblas_get_corename()
/// names them.
std::string openblas_core_name();

/// The OpenBLAS core this process should have asked for, or nullptr when it has the right one:
/// non-null when OpenBLAS did not recognise the CPU and fell back to its generic Prescott (SSE3)
/// kernels on a CPU with AVX2 and FMA, and OPENBLAS_CORETYPE is not set. It is then the core
/// OpenBLAS gives the CPUs it knows with the same features: "SkylakeX" with AVX-512 F/BW/DQ/VL,
/// else "Haswell". Debian 12's OpenBLAS 0.3.21 falls back so on Intel's Emerald Rapids (family 6,
/// model 207) and later models.
const char* better_openblas_core();

/// For an executable's main(), first thing: when better_openblas_core() names a core, sets
/// OPENBLAS_CORETYPE to it and executes the program again (its path from /proc/self/exe, the same
/// argv), since OpenBLAS reads the variable only when it loads, before main(). Returns (changing
/// nothing) when no core is better or the exec fails. Changes speed, and (as any BLAS change may)
/// the last bits of float GEMM sums.
void restart_with_better_openblas_core(char** argv);

}  // namespace onnxdbg::reference
