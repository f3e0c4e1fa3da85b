// Fuzz target: bytes as onnxdbg or onnxdbg-worker reads them from the other's pipe, through
// worker::read_frame (frames back to back: prefix, JSON header, tensor and value descriptions,
// payload); every frame read is written back (write_frame / write_value_frame) and must read again.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "backends/worker_protocol.h"
#include "fuzz_limits.h"

using namespace onnxdbg;

namespace {

/// A memory file holding `size` bytes of `data`, at offset 0; -1 when the system refuses.
int memory_file(const void* data, size_t size) {
  const int fd = memfd_create("onnxdbg-fuzz-frame", MFD_CLOEXEC);
  if (fd < 0) return -1;
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t w = write(fd, p, size);
    if (w <= 0) {
      close(fd);
      return -1;
    }
    p += w;
    size -= static_cast<size_t>(w);
  }
  lseek(fd, 0, SEEK_SET);
  return fd;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const ScopedRunLimits limits(fuzz_limits());
  const int in = memory_file(data, size);
  if (in < 0) return 0;
  for (int i = 0; i < 4; ++i) {
    worker::Frame f;
    if (worker::read_frame(in, &f, std::nullopt).result != worker::IoResult::kOk) break;
    const int out = memfd_create("onnxdbg-fuzz-frame-out", MFD_CLOEXEC);
    if (out < 0) break;
    const bool values = f.header.contains("values");
    const worker::IoOutcome w =
        values ? worker::write_value_frame(out, f.header, f.values, std::nullopt)
               : worker::write_frame(out, f.header, f.tensors, std::nullopt);
    if (w.result != worker::IoResult::kOk) std::abort();
    lseek(out, 0, SEEK_SET);
    worker::Frame again;
    if (worker::read_frame(out, &again, std::nullopt).result != worker::IoResult::kOk ||
        again.values.size() != f.values.size() || again.tensors.size() != f.tensors.size())
      std::abort();
    close(out);
  }
  close(in);
  return 0;
}
