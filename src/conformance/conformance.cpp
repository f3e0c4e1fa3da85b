// ONNX backend test-case runner (the layout of onnx/backend/test/data/node/*).
#include "conformance/conformance.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include "data/test_data.h"
#include "model/model.h"
#include "onnxdbg/compare.h"

namespace onnxdbg::conformance {

namespace fs = std::filesystem;

std::vector<fs::path> find_cases(const std::vector<fs::path>& roots) {
  std::vector<fs::path> out;
  for (const auto& root : roots) {
    std::error_code ec;
    if (fs::exists(root / "model.onnx", ec)) {
      out.push_back(root);
      continue;
    }
    for (const auto& e : fs::directory_iterator(root, ec))
      if (e.is_directory(ec) && fs::exists(e.path() / "model.onnx", ec)) out.push_back(e.path());
  }
  std::sort(out.begin(), out.end(),
            [](const fs::path& a, const fs::path& b) { return a.filename() < b.filename(); });
  return out;
}

namespace {
void collect_ops(const onnx::GraphProto& g, std::set<std::string>& ops) {
  for (const auto& n : g.node()) {
    const bool default_domain = n.domain().empty() || n.domain() == "ai.onnx";
    ops.insert(default_domain ? n.op_type() : n.domain() + ":" + n.op_type());
    for (const auto& a : n.attribute()) {
      if (a.has_g()) collect_ops(a.g(), ops);
      for (const auto& sg : a.graphs()) collect_ops(sg, ops);
    }
  }
}
}  // namespace

Expected<std::vector<std::string>> case_op_types(const fs::path& case_dir) {
  ODB_ASSIGN_OR_RETURN(LoadedModel m, load_model(case_dir / "model.onnx"));
  std::set<std::string> ops;
  collect_ops(m.proto.graph(), ops);
  return std::vector<std::string>(ops.begin(), ops.end());
}

namespace {

// Whether two numeric tensors of one dtype and shape differ in any byte.
bool values_differ(const Tensor& a, const Tensor& b) {
  return a.nbytes() != b.nbytes() || (a.nbytes() && std::memcmp(a.raw(), b.raw(), a.nbytes()) != 0);
}

// Why `got` differs from `want` ("" when it matches): tensors element-wise within `tol`, sequences
// element by element, optionals by presence and then content.
std::string value_mismatch(const Value& got, const Value& want, const Tolerance& tol,
                           const std::string& what) {
  if (got.kind() != want.kind())
    return what + " is " + got.kind_name() + ", expected " + want.kind_name();
  switch (want.kind()) {
    case Value::Kind::kTensor: {
      const Tensor &a = got.tensor(), &e = want.tensor();
      if (a.dtype() != e.dtype())
        return what + " is " + std::string(dtype_name(a.dtype())) + ", expected " +
               std::string(dtype_name(e.dtype()));
      auto c = compare_tensors(a, e, tol);
      if (!c.pass)
        return what + ": " + c.reason + " (max abs error " + std::to_string(c.max_abs_error) + ")";
      return {};
    }
    case Value::Kind::kSequence: {
      if (got.sequence().holds_maps() || want.sequence().holds_maps()) {
        const auto &a = got.sequence().maps, &e = want.sequence().maps;
        if (got.sequence().holds_maps() != want.sequence().holds_maps() || a.size() != e.size())
          return what + " is " + got.describe() + ", expected " + want.describe();
        for (size_t i = 0; i < a.size(); ++i) {
          std::string m = value_mismatch(a[i], e[i], tol, what + " element " + std::to_string(i));
          if (!m.empty()) return m;
        }
        return {};
      }
      const auto &a = got.sequence().tensors, &e = want.sequence().tensors;
      if (a.size() != e.size())
        return what + " is a sequence of " + std::to_string(a.size()) + " tensors, expected " +
               std::to_string(e.size());
      for (size_t i = 0; i < a.size(); ++i) {
        std::string m = value_mismatch(a[i], e[i], tol, what + " element " + std::to_string(i));
        if (!m.empty()) return m;
      }
      return {};
    }
    case Value::Kind::kOptional:
      if (got.has_element() != want.has_element())
        return what + " is " + (got.has_element() ? "a non-empty" : "an empty") +
               " optional, expected " + (want.has_element() ? "a non-empty" : "an empty") + " one";
      return got.has_element() ? value_mismatch(got.element(), want.element(), tol, what)
                               : std::string();
    case Value::Kind::kMap: {
      // Keys exactly (same order: ZipMap writes its labels' order), values within `tol`.
      const Map &a = got.map(), &e = want.map();
      if (a.keys.dtype() != e.keys.dtype() || a.keys.shape() != e.keys.shape() ||
          (a.keys.dtype() == DType::kString ? a.keys.strings() != e.keys.strings()
                                            : values_differ(a.keys, e.keys)))
        return what + " has keys that differ from the expected map's";
      return value_mismatch(Value(a.values), Value(e.values), tol, what + " values");
    }
  }
  return {};
}

}  // namespace

CaseResult run_case(const fs::path& case_dir, Backend& backend, const ConformanceOptions& options) {
  auto model = load_model(case_dir / "model.onnx");
  if (!model) {
    CaseResult r;
    r.name = case_dir.filename().string();
    r.reason = model.status().to_string();
    return r;
  }
  return run_case(case_dir, *model, backend, options);
}

CaseResult run_case(const fs::path& case_dir, const LoadedModel& model, Backend& backend,
                    const ConformanceOptions& options) {
  CaseResult r;
  r.name = case_dir.filename().string();
  auto session = backend.load(model);  // the reference builds it from the parsed model
  if (!session) {
    r.status = session.status().code() == ErrorCode::kUnsupported ? CaseStatus::kUnsupported
                                                                  : CaseStatus::kFailed;
    r.reason = session.status().to_string();
    return r;
  }
  std::vector<fs::path> sets;
  std::error_code ec;  // an unreadable folder is a case without data sets, not an exception
  for (const auto& e : fs::directory_iterator(case_dir, ec))
    if (e.is_directory(ec) && e.path().filename().string().rfind("test_data_set_", 0) == 0)
      sets.push_back(e.path());
  std::sort(sets.begin(), sets.end());
  if (sets.empty()) {
    r.reason = "no test_data_set_N folder";
    return r;
  }
  const Tolerance tol{options.atol, options.rtol};
  for (const auto& set : sets) {
    auto inputs = load_test_data_input_values(set, model.proto.graph());
    auto expected = load_test_data_output_values(set, model.proto.graph());
    if (!inputs || !expected) {
      const Status& st = !inputs ? inputs.status() : expected.status();
      r.status =
          st.code() == ErrorCode::kUnsupported ? CaseStatus::kUnsupported : CaseStatus::kFailed;
      r.reason = st.to_string();
      return r;
    }
    auto run = (*session)->run_values(*inputs);
    if (!run) {
      r.status = run.status().code() == ErrorCode::kUnsupported ? CaseStatus::kUnsupported
                                                                : CaseStatus::kFailed;
      r.reason = run.status().to_string();
      return r;
    }
    for (const auto& [name, want] : *expected) {
      auto it = run->outputs.find(name);
      if (it == run->outputs.end()) {
        r.reason = set.filename().string() + ": output '" + name + "' missing";
        return r;
      }
      std::string m = value_mismatch(it->second, want, tol, "output '" + name + "'");
      if (!m.empty()) {
        r.reason = set.filename().string() + ": " + m;
        return r;
      }
    }
  }
  r.status = CaseStatus::kPassed;
  return r;
}

CaseResult run_random_case(const fs::path& case_dir, Backend& backend) {
  CaseResult r;
  r.name = case_dir.filename().string();
  auto fail = [&](std::string why) {
    r.status = CaseStatus::kFailed;
    r.reason = std::move(why);
    return r;
  };
  auto model = load_model(case_dir / "model.onnx");
  if (!model) return fail(model.status().to_string());
  auto session = backend.load(*model);  // the reference builds it from the parsed model
  if (!session) return fail(session.status().to_string());
  const auto set = case_dir / "test_data_set_0";
  auto inputs = load_test_data_inputs(set, model->proto.graph());
  auto expected = load_test_data_outputs(set, model->proto.graph());
  if (!inputs || !expected) return fail("cannot read " + set.string());
  auto run = (*session)->run(*inputs);
  if (!run) return fail(run.status().to_string());
  for (const auto& [name, want] : *expected) {
    auto it = run->outputs.find(name);
    if (it == run->outputs.end()) return fail("output '" + name + "' missing");
    const Tensor& got = it->second;
    if (got.dtype() != want.dtype() || got.shape() != want.shape())
      return fail("output '" + name + "' is " + std::string(dtype_name(got.dtype())) + " " +
                  shape_to_string(got.shape()) + ", expected " +
                  std::string(dtype_name(want.dtype())) + " " + shape_to_string(want.shape()));
    for (int64_t i = 0; i < got.numel(); ++i)
      if (got.get_as_double(i) != 0 && got.get_as_double(i) != 1)
        return fail("output '" + name + "' holds " + std::to_string(got.get_as_double(i)));
  }
  r.status = CaseStatus::kPassed;
  return r;
}

}  // namespace onnxdbg::conformance
