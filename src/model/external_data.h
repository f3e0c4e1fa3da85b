// External tensor data (ONNX IR spec, "External Tensor Data"): where a tensor's bytes live, mapping
// them into memory, and writing a model whose weights are streamed into a data file beside it.
// Models onnxdbg writes into temp folders keep their references and are loaded with the
// original's folder as their external data folder (Backend::load); models written for the user
// go through save_model_with_external_data. Weights are never copied into a protobuf message
// that must stay under 2 GiB.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "core/onnx.h"
#include "onnxdbg/status.h"
#include "onnxdbg/tensor.h"

namespace onnxdbg {

/// Where a tensor's external data is.
struct ExternalData {
  std::string location;        ///< as written in the model ("weights.bin")
  std::filesystem::path file;  ///< resolved inside the model's folder
  int64_t offset = 0;          ///< bytes, >= 0
  int64_t length = -1;         ///< bytes, -1: not given
};

/// Parses `t`'s external_data entries and resolves "location" against `base_dir`. Absolute paths,
/// paths with "..", and symbolic links leading out of `base_dir` are refused (ONNX Runtime refuses
/// them too). Errors: kModelError naming the tensor (no location, bad offset/length numbers, an
/// escaping path).
Expected<ExternalData> external_data(const onnx::TensorProto& t,
                                     const std::filesystem::path& base_dir);

/// Bytes the dims and type of the external tensor `t` claim (packed for the 4-, 2- and 6-bit
/// types), which `ext.length`, when given, must equal. Errors: kModelError for a string tensor,
/// a length that disagrees, or dims whose bytes no file could hold.
Expected<int64_t> external_byte_count(const onnx::TensorProto& t, const ExternalData& ext);

/// Checks every external reference of `g` and its subgraphs (initializers and tensor attributes)
/// without reading the data: a safe location, a file there, long enough for offset + length.
/// Errors: kModelError naming the first bad tensor.
Status check_external_data(const onnx::GraphProto& g, const std::filesystem::path& base_dir);

/// Every distinct "location" of an external tensor in `g` and its subgraphs, in first-use order.
std::vector<std::string> external_data_locations(const onnx::GraphProto& g);

/// `length` bytes of `file` at `offset`, mapped copy-on-write (mmap MAP_PRIVATE): the pages are
/// the page cache's until written, so a 3 GB weight file costs no copy and no allocation. Used by
/// tensor_from_proto for external tensors of 1 MiB and more whose offset suits their element
/// size. The caller has checked that the file holds the bytes. Errors: kModelError with the
/// system's reason (the caller then reads the bytes instead).
Expected<ByteBuffer> map_file_region(const std::filesystem::path& file, int64_t offset,
                                     int64_t length);

/// The largest model (graph plus inline weights) written as one protobuf: protobuf refuses
/// messages of 2 GiB, and 64 MiB are left for the graph itself.
inline constexpr int64_t kMaxInlineModelBytes = (int64_t{2} << 30) - (int64_t{64} << 20);

/// Reads every external tensor of `model` (initializers and tensor attributes, subgraphs
/// included; resolved against `base_dir`) into raw_data, for a consumer that reads no external
/// data (OpenCV 4.6). Errors: kInvalidArgument when the result would reach `limit` bytes
/// (nothing is read then); kModelError when external data cannot be read.
Status inline_external_data(onnx::ModelProto& model, const std::filesystem::path& base_dir,
                            int64_t limit = kMaxInlineModelBytes);

/// Writes `model` to `out` self-contained: external data (resolved against `base_dir`) is read
/// and stored inline when the whole model stays under `inline_limit` bytes; otherwise every
/// tensor over 1 KiB (initializers and tensor attributes, subgraphs included) goes into one data
/// file "<out file name>.data" beside `out`, its bytes streamed from their source in 4 MiB pieces
/// (never the whole tensor in memory), each large tensor at an offset aligned to 4096 bytes so
/// that runtimes can map it. Both files are written atomically (temporary file, fsync, rename;
/// the data file first), so `out` may be the source model itself.
/// With `share_source_data`, a model written into `base_dir` itself keeps its external references
/// as they are (the source's data files serve both; reduce's candidates and results), and nothing
/// is read or copied. Errors: kInvalidArgument when a file cannot be written (the system's
/// reason); kModelError when external data cannot be read.
Status save_model_with_external_data(const onnx::ModelProto& model,
                                     const std::filesystem::path& base_dir,
                                     const std::filesystem::path& out,
                                     bool share_source_data = false,
                                     int64_t inline_limit = kMaxInlineModelBytes);

}  // namespace onnxdbg
