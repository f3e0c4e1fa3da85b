// numpy .npy files <-> Tensor: the format numpy's np.save/np.load use for one array
// (numpy NEP 1, "A Simple File Format for NumPy Arrays", format versions 1.0, 2.0 and 3.0).
// Only little-endian, C-order arrays are read; everything else is refused with kUnsupported.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "onnxdbg/status.h"
#include "onnxdbg/tensor.h"

namespace onnxdbg {

/// Parses the bytes of a .npy file into a Tensor.
///
/// Element types (numpy `descr` -> DType): '<f2' float16, '<f4' float32, '<f8' float64,
/// '|i1'/'<i1' int8, '<i2' int16, '<i4' int32, '<i8' int64, '|u1'/'<u1' uint8, '<u2' uint16,
/// '<u4' uint32, '<u8' uint64, '|b1' bool (any non-zero byte reads as true), '<c8' complex64,
/// '<c16' complex128, '|Sn' (bytes, trailing NULs dropped) and '<Un' (UTF-32, converted to
/// UTF-8) string. '=' is accepted as '<' (this host is little-endian).
/// The ONNX narrow types and bfloat16 are read from ml_dtypes' names, the descr that numpy with
/// ml_dtypes imported parses ('float8_e4m3fn', 'float8_e4m3fnuz', 'float8_e5m2',
/// 'float8_e5m2fnuz', 'float8_e8m0fnu', 'float4_e2m1fn', 'float6_e2m3fn', 'float6_e3m2fn',
/// 'int4', 'uint4', 'int2', 'uint2': one byte per element holding its code in the low bits, the
/// bits above the type's width ignored; 'bfloat16': two bytes, little-endian).
/// A 0-d array gives a rank-0 Tensor.
///
/// `what` names the data in error messages, e.g. "'x.npz' entry 'a.npy'".
/// Errors: kInvalidArgument for data that is not a .npy file (bad magic, truncated header,
/// a header that is not numpy's dict literal, negative or overflowing shape, fewer or more data
/// bytes than the shape needs); kUnsupported for big-endian data, fortran_order True, structured
/// or object dtypes and other element types not listed above, and for '<V1', '<V2' and '<f1':
/// what np.save writes for ml_dtypes arrays, whose element type it loses.
Expected<Tensor> read_npy(std::string_view bytes, const std::string& what = "npy data");

/// Serializes `t` as a .npy file: format 1.0, or 2.0 when the header exceeds 65535 bytes;
/// fortran_order False, header padded so the data starts on a 64-byte boundary (as numpy does).
/// Element types map back as in read_npy; the narrow types are written under ml_dtypes' names
/// (one byte per element, ml_dtypes' layout: numpy loads them once ml_dtypes is imported).
/// bfloat16 is widened exactly to '<f4', so that numpy without ml_dtypes reads it too; string
/// tensors are written as '|Sn' with n the longest string (at least 1).
/// Precondition: !t.empty() (an undefined tensor is written as a 0-d float32 zero).
std::string write_npy(const Tensor& t);

/// Reads a .npy file from disk. Errors: kNotFound when it cannot be read, then as read_npy.
Expected<Tensor> load_npy(const std::filesystem::path& path);

/// Writes write_npy(t) to `path`. Errors: kInvalidArgument when the file cannot be written.
Status save_npy(const std::filesystem::path& path, const Tensor& t);

/// Reads a whole file into a string. Errors: kNotFound (missing or unreadable), naming the file.
Expected<std::string> read_file_bytes(const std::filesystem::path& path);

}  // namespace onnxdbg
