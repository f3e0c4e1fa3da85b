// examples/compare.cpp: a whole program on onnxdbg's public API. It runs a model on onnxdbg's
// reference interpreter and on ONNX Runtime with generated inputs and prints the verdict.
// Build it against an installed onnxdbg with examples/CMakeLists.txt (find_package(onnxdbg)).
#include <iostream>

#include "onnxdbg/onnxdbg.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: compare MODEL.onnx\n";
    return 2;
  }
  onnxdbg::api::RunOptions options;
  options.model = argv[1];
  options.backends = {{"reference", {}}, {"onnxruntime", {}}};
  auto result = onnxdbg::api::run(options);
  if (!result) {
    std::cerr << "error: " << result.status().to_string() << "\n";
    return 2;
  }
  const onnxdbg::Verdict verdict = result->verdict();
  std::cout << onnxdbg::verdict_name(verdict) << ": " << result->report.verdict_line << "\n";
  return verdict == onnxdbg::Verdict::kAgree ? 0 : 1;
}
