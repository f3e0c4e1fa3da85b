// onnxdbg-fuzz-replay TARGET FILE...: runs one fuzz target's entry point once on each file, as a
// libFuzzer binary does when given files, in builds without libFuzzer (GCC's, in `make test`). A
// crash, a sanitizer report or an abort fails the ctest (fuzz.<target>) that runs it.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>

#define ONNXDBG_FUZZ_TARGET(name) extern "C" int onnxdbg_fuzz_##name(const uint8_t*, size_t);
#include "targets.def"
#undef ONNXDBG_FUZZ_TARGET

namespace {

struct Target {
  const char* name;
  int (*run)(const uint8_t*, size_t);
};

constexpr Target kTargets[] = {
#define ONNXDBG_FUZZ_TARGET(name) {#name, onnxdbg_fuzz_##name},
#include "targets.def"
#undef ONNXDBG_FUZZ_TARGET
};

}  // namespace

int main(int argc, char** argv) {
  const Target* target = nullptr;
  for (const Target& t : kTargets)
    if (argc > 1 && std::strcmp(argv[1], t.name) == 0) target = &t;
  if (!target) {
    std::fprintf(stderr, "usage: onnxdbg-fuzz-replay TARGET FILE...; targets:");
    for (const Target& t : kTargets) std::fprintf(stderr, " %s", t.name);
    std::fprintf(stderr, "\n");
    return 2;
  }
  for (int i = 2; i < argc; ++i) {
    std::ifstream in(argv[i], std::ios::binary);
    if (!in) {
      std::fprintf(stderr, "cannot read %s\n", argv[i]);
      return 2;
    }
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::fprintf(stderr, "%s: %s (%zu bytes)\n", target->name, argv[i], bytes.size());
    target->run(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  }
  std::fprintf(stderr, "%s: %d input(s) ran without a crash\n", target->name, argc - 2);
  return 0;
}
