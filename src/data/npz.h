// numpy .npz archives <-> named Tensors: a zip file holding one NAME.npy entry per array, as
// written by np.savez (stored) and np.savez_compressed (deflated). Uses libzip.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <string_view>

#include "onnxdbg/status.h"
#include "onnxdbg/tensor.h"

namespace onnxdbg {

/// Reads every array of an .npz file. The key of each tensor is the entry name without its
/// ".npy" suffix (names may contain '/', ':' and other characters; they are kept verbatim, as
/// np.load does). Entries may be stored or deflated; element types are those of read_npy.
/// Directory entries are skipped.
/// Errors (each names the file and, where there is one, the entry): kNotFound (missing or
/// unreadable file), kInvalidArgument (not a zip archive, truncated or inconsistent archive,
/// an entry that fails its CRC check or is not a .npy file, an entry whose name does not end in
/// ".npy", a .npy header that lies about its size), kUnsupported (dtypes read_npy refuses).
Expected<std::map<std::string, Tensor>> load_npz(const std::filesystem::path& path);
/// As load_npz, from the bytes of an archive held in memory; `what` names it in messages.
/// Errors: kInvalidArgument as load_npz's (an empty buffer included), kUnsupported.
Expected<std::map<std::string, Tensor>> read_npz(std::string_view bytes, const std::string& what);

/// Writes `tensors` to an .npz file at `path`, replacing it: entry "<name>.npy" holds
/// write_npy(tensor) (so bfloat16 is widened to float32, strings become '|Sn', the narrow types
/// take ml_dtypes' names). Entries are stored uncompressed like np.savez, or deflated like
/// np.savez_compressed when `compress`.
/// The archive is written to a temporary file and renamed, so a failure leaves no partial file.
/// Errors: kInvalidArgument when the file cannot be created or written (message names it).
Status save_npz(const std::filesystem::path& path, const std::map<std::string, Tensor>& tensors,
                bool compress = false);

}  // namespace onnxdbg
