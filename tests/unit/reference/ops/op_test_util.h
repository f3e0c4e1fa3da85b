// Small helpers for the op tests: run a one-graph text model and return one output, or the error.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "../../test_util.h"

namespace onnxdbg::testing {

/// Runs the model written in ONNX text format on the reference interpreter and returns output
/// `out` (an empty Tensor, with a test failure, when the run fails).
inline Tensor run_op(const std::string& text, const std::map<std::string, Tensor>& inputs,
                     const std::string& out = "z") {
  auto outs = run_reference(parse_text_model(text), inputs);
  auto it = outs.find(out);
  if (it == outs.end()) {
    ADD_FAILURE() << "no output '" << out << "'";
    return Tensor();
  }
  return it->second;
}

/// Runs the model expecting failure; returns the error text.
inline std::string run_op_error(const std::string& text,
                                const std::map<std::string, Tensor>& inputs) {
  return run_reference_error(parse_text_model(text), inputs);
}

template <class T>
Tensor tensor(Shape shape, std::vector<T> values) {
  return Tensor::from_vector<T>(std::move(shape), values);
}

/// "[1,2,3]": dims or attribute values as ONNX text format writes them.
inline std::string ints_text(const std::vector<int64_t>& v) {
  std::string t = "[";
  for (size_t i = 0; i < v.size(); ++i) t += (i ? "," : "") + std::to_string(v[i]);
  return t + "]";
}

/// The number of elements of a tensor of shape `s`.
inline int64_t count_of(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

inline Tensor f32(Shape shape, std::vector<float> v) { return tensor<float>(std::move(shape), v); }

inline Tensor f16(Shape shape, const std::vector<float>& v) {
  std::vector<Float16> h;
  for (float f : v) h.emplace_back(f);
  return tensor<Float16>(std::move(shape), h);
}

}  // namespace onnxdbg::testing
