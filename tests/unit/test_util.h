// Helpers for tests: build models from ONNX text format (onnx::OnnxParser), run them on the
// reference interpreter, and compare tensors.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "core/value.h"
#include "model/model.h"
#include "onnx/defs/parser.h"
#include "reference/interpreter.h"

namespace onnxdbg::testing {

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

/// Expects `t` to have `shape` and values close to `expected` (|a-b| <= atol + rtol*|b|).
inline void expect_tensor_near(const Tensor& t, const Shape& shape, const std::vector<double>& expected,
                               double atol = 1e-5, double rtol = 1e-5) {
  ASSERT_EQ(shape_to_string(t.shape()), shape_to_string(shape));
  ASSERT_EQ(static_cast<size_t>(t.numel()), expected.size());
  for (int64_t i = 0; i < t.numel(); ++i) {
    const double a = t.get_as_double(i), b = expected[static_cast<size_t>(i)];
    if (std::isnan(b)) {
      EXPECT_TRUE(std::isnan(a)) << "element " << i;
      continue;
    }
    EXPECT_LE(std::abs(a - b), atol + rtol * std::abs(b)) << "element " << i << ": " << a << " vs " << b;
  }
}

}  // namespace onnxdbg::testing
