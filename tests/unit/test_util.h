// Helpers for tests: a temporary folder per test, build models from ONNX text format
// (onnx::OnnxParser), run them on the reference interpreter, compare tensors, run the real onnxdbg
// binary, and the demo model.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "../../tools/demo_model.h"
#include "core/onnx.h"
#include "core/temp_dir.h"
#include "model/model.h"
#include "onnx/defs/parser.h"
#include "onnxdbg/tensor.h"
#include "onnxdbg/value.h"
#include "reference/interpreter.h"

namespace onnxdbg::testing {

/// A fresh folder `prefix`XXXXXX under $TMPDIR for one test, removed when the TempDir dies; '/'
/// and other characters outside [A-Za-z0-9._-] in `prefix` (parameterized test names) become '_'.
/// Throws std::runtime_error (GoogleTest reports it as a failure of the test) when it cannot be
/// made, so that no test goes on writing to relative paths in the current folder instead.
inline TempDir make_temp_dir(std::string_view prefix = "onnxdbg-test-") {
  std::string name(prefix);
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') c = '_';
  Expected<TempDir> dir = TempDir::create(name);
  if (!dir) throw std::runtime_error(dir.status().to_string());
  return std::move(*dir);
}

/// Parses a model written in ONNX text format; fails the test on a syntax error.
inline onnx::ModelProto parse_text_model(const std::string& text) {
  onnx::ModelProto m;
  onnx::OnnxParser parser(text.c_str());
  auto st = parser.Parse(m);
  EXPECT_TRUE(st.IsOK()) << st.ErrorMessage() << "\n" << text;
  return m;
}

/// Declares graph input or output `name` of `model` with a type written in ONNX text
/// ("seq(float[])", "optional(seq(int64[]))"). ONNX 1.12's parser reads seq/optional types only
/// where a type is required, not in graph signatures, so tests leave such names untyped in the
/// text and declare them here.
inline void declare_type(onnx::ModelProto& model, const std::string& name,
                         const std::string& type) {
  onnx::TypeProto t;
  auto st = onnx::OnnxParser::Parse(t, type.c_str());
  ASSERT_TRUE(st.IsOK()) << st.ErrorMessage() << ": " << type;
  bool found = false;
  for (auto* list :
       {model.mutable_graph()->mutable_input(), model.mutable_graph()->mutable_output()})
    for (auto& vi : *list)
      if (vi.name() == name) {
        *vi.mutable_type() = t;
        found = true;
      }
  EXPECT_TRUE(found) << "no graph input or output '" << name << "'";
}

/// Runs `model` on the reference interpreter; fails the test on error.
inline std::map<std::string, Tensor> run_reference(const onnx::ModelProto& model,
                                                   const std::map<std::string, Tensor>& inputs) {
  auto in = reference::Interpreter::create(model);
  EXPECT_TRUE(in.has_value()) << (in ? "" : in.status().to_string());
  if (!in) return {};
  auto out = (*in)->run(inputs);
  EXPECT_TRUE(out.has_value()) << (out ? "" : out.status().to_string());
  if (!out) return {};
  return std::move(*out);
}

/// Runs `model` expecting an error; returns its message.
inline std::string run_reference_error(const onnx::ModelProto& model,
                                       const std::map<std::string, Tensor>& inputs) {
  auto in = reference::Interpreter::create(model);
  if (!in) return in.status().to_string();
  auto out = (*in)->run(inputs);
  EXPECT_FALSE(out.has_value()) << "expected the run to fail";
  return out ? std::string() : out.status().to_string();
}

/// Runs `model` on the reference interpreter with values of any kind (sequences, optionals);
/// fails the test on error.
inline std::map<std::string, Value> run_reference_values(
    const onnx::ModelProto& model, const std::map<std::string, Value>& inputs) {
  auto in = reference::Interpreter::create(model);
  EXPECT_TRUE(in.has_value()) << (in ? "" : in.status().to_string());
  if (!in) return {};
  auto out = (*in)->run_values(inputs);
  EXPECT_TRUE(out.has_value()) << (out ? "" : out.status().to_string());
  if (!out) return {};
  return std::move(*out);
}

/// As run_reference_values, expecting an error; returns its message.
inline std::string run_reference_values_error(const onnx::ModelProto& model,
                                              const std::map<std::string, Value>& inputs) {
  auto in = reference::Interpreter::create(model);
  if (!in) return in.status().to_string();
  auto out = (*in)->run_values(inputs);
  EXPECT_FALSE(out.has_value()) << "expected the run to fail";
  return out ? std::string() : out.status().to_string();
}

/// A sequence of `tensors` of element type `elem`.
inline Sequence sequence_of(DType elem, std::vector<Tensor> tensors) {
  Sequence s;
  s.elem_type = elem;
  s.tensors = std::move(tensors);
  return s;
}

/// Element values of any numeric tensor as doubles.
inline std::vector<double> values(const Tensor& t) {
  std::vector<double> v(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) v[static_cast<size_t>(i)] = t.get_as_double(i);
  return v;
}

/// A .npy file's bytes: the magic, format `version` (1, or 2 with a 4-byte header length), the
/// header `dict` padded to a multiple of 64 bytes, then `data` (NumPy's "npy format" NEP 1).
inline std::string npy_with_header(const std::string& dict, const std::string& data,
                                   int version = 1) {
  std::string header = dict;
  const size_t pre = version == 1 ? 10 : 12;
  while ((pre + header.size() + 1) % 64) header += ' ';
  header += '\n';
  std::string out = "\x93NUMPY";
  out += static_cast<char>(version);
  out += '\0';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>((header.size() >> 8) & 0xff);
  if (version != 1) out += std::string(2, '\0');
  return out + header + data;
}

/// The float32 tensor [[a, b, c]] (shape 1x3).
inline Tensor row(float a, float b, float c) {
  return Tensor::from_vector<float>({1, 3}, {a, b, c});
}

/// A fresh, empty folder `name` in this process's test folder (a TempDir, removed when the tests
/// end).
inline std::filesystem::path fresh_dir(const std::string& name) {
  static const TempDir root = make_temp_dir("onnxdbg_test_dirs_");
  const std::filesystem::path dir = root.path() / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

/// Whether `a` and `b` have the same dtype, shape and bytes (NaN payloads and -0 included).
inline bool same_bits(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() && a.nbytes() == b.nbytes() &&
         std::memcmp(a.raw(), b.raw(), a.nbytes()) == 0;
}

/// A float32 tensor of `shape` holding from, from + 1, from + 2, ... in row-major order.
inline Tensor iota(Shape shape, float from = 0.0f) {
  Tensor t(DType::kFloat, std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = from + static_cast<float>(i);
  return t;
}

/// Expects `t` to have `shape` and values close to `expected` (|a-b| <= atol + rtol*|b|).
inline void expect_tensor_near(const Tensor& t, const Shape& shape,
                               const std::vector<double>& expected, double atol = 1e-5,
                               double rtol = 1e-5) {
  ASSERT_EQ(shape_to_string(t.shape()), shape_to_string(shape));
  ASSERT_EQ(static_cast<size_t>(t.numel()), expected.size());
  for (int64_t i = 0; i < t.numel(); ++i) {
    const double a = t.get_as_double(i), b = expected[static_cast<size_t>(i)];
    if (std::isnan(b)) {
      EXPECT_TRUE(std::isnan(a)) << "element " << i;
      continue;
    }
    EXPECT_LE(std::abs(a - b), atol + rtol * std::abs(b))
        << "element " << i << ": " << a << " vs " << b;
  }
}

/// What the onnxdbg binary did in run_cli.
struct CliResult {
  int exit_code = -1;  ///< the process exit status, 128 + signal when a signal ended it
  std::string out;     ///< stdout, or stdout and stderr interleaved when merge_stderr
  std::string err;     ///< stderr (empty when merge_stderr)
};

/// Runs the onnxdbg binary of this build with `args` (a shell command line: quote paths with
/// spaces) in folder `dir` (the test's current folder when empty). With `merge_stderr`, stderr
/// goes to `out` in the order written (2>&1); otherwise it is captured apart in `err`. `env`, when
/// given, is put before the command ("TMPDIR=/x ": variable assignments ending in a space).
inline CliResult run_cli(const std::string& args, const std::filesystem::path& dir = {},
                         bool merge_stderr = false, const std::string& env = "") {
  const TempDir err_dir = make_temp_dir("onnxdbg_cli_stderr_");
  const std::filesystem::path err_file = err_dir.path() / "stderr.txt";
  const std::string cmd = (dir.empty() ? "" : "cd '" + dir.string() + "' && ") + env +
                          std::string(ONNXDBG_BINARY_DIR) + "/onnxdbg " + args +
                          (merge_stderr ? " 2>&1" : " 2>'" + err_file.string() + "'");
  CliResult r;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  const int st = pclose(p);
  r.exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  if (!merge_stderr) {
    std::ifstream e(err_file);
    r.err.assign(std::istreambuf_iterator<char>(e), std::istreambuf_iterator<char>());
  }
  return r;
}

/// The demo model of tools/make_demo_model.cpp (tools/demo_model.h): MatMul, Relu and a Softmax at
/// opset 13 without an axis on float[1,3,4] x; outputs 'probs' and 'scaled'. OpenCV 4.6 applies
/// Softmax's pre-13 default axis, so it disagrees on 'probs'.
inline const char* demo_model_text() { return demo::model_text(); }

}  // namespace onnxdbg::testing
