// api::conformance (include/onnxdbg/conformance.h): every test case on every backend, tallied,
// and its renderings.
#include "onnxdbg/conformance.h"

#include <map>

#include "backends/backend.h"
#include "conformance/conformance.h"
#include "onnxdbg/enum_names.h"
#include "report/table.h"

namespace onnxdbg::api {

namespace {

/// The case folders under `dirs`, filtered. Errors: a folder that does not exist, no case.
Expected<std::vector<std::filesystem::path>> find_all_cases(const ConformanceOptions& o) {
  std::vector<std::filesystem::path> roots;
  for (const auto& d : o.dirs) {
    std::error_code ec;
    if (!std::filesystem::is_directory(d, ec))
      return not_found("'" + d.string() + "' is not a folder of ONNX backend test cases");
    roots.push_back(d);
  }
  auto cases = conformance::find_cases(roots);
  if (!o.filter.empty())
    std::erase_if(cases, [&](const auto& c) {
      return c.filename().string().find(o.filter) == std::string::npos;
    });
  if (cases.empty())
    return not_found("no test case (a folder with model.onnx) under the given folders");
  return cases;
}

nlohmann::json tally_json(const BackendTally& t, const std::vector<int64_t>& opsets) {
  nlohmann::json j;
  j["backend"] = t.spec.to_string();
  j["passed"] = t.passed;
  j["failed"] = t.failed;
  j["unsupported"] = t.unsupported;
  j["total"] = t.results.size();
  j["cases"] = nlohmann::json::array();
  nlohmann::json by_opset = nlohmann::json::object();
  for (size_t i = 0; i < t.results.size(); ++i) {
    const auto& r = t.results[i];
    const int64_t opset = i < opsets.size() ? opsets[i] : 0;
    j["cases"].push_back({{"case", r.name},
                          {"opset", opset},
                          {"status", case_status_name(r.status)},
                          {"reason", r.reason}});
    const char* counter = r.status == conformance::CaseStatus::kPassed   ? "passed"
                          : r.status == conformance::CaseStatus::kFailed ? "failed"
                                                                         : "unsupported";
    auto& o = by_opset[std::to_string(opset)];
    if (o.is_null()) o = {{"passed", 0}, {"failed", 0}, {"unsupported", 0}};
    o[counter] = o[counter].get<int>() + 1;
  }
  j["by_opset"] = by_opset;
  return j;
}

// "opset | cases | <backend> passed..." for every opset the cases use, lowest first.
void print_opset_table(const ConformanceResult& result, std::ostream& os) {
  std::map<int64_t, std::vector<int>> passed;  // opset -> [cases, passed per backend...]
  for (size_t i = 0; i < result.cases.size(); ++i) {
    const int64_t opset = i < result.opsets.size() ? result.opsets[i] : 0;
    auto& row = passed[opset];
    row.resize(1 + result.tallies.size(), 0);
    ++row[0];
    for (size_t b = 0; b < result.tallies.size(); ++b)
      if (result.tallies[b].results[i].status == conformance::CaseStatus::kPassed) ++row[1 + b];
  }
  std::vector<std::string> headers{"opset", "cases"};
  for (const auto& t : result.tallies) headers.push_back(t.spec.to_string() + " passed");
  report::Table table(headers);
  for (const auto& [opset, row] : passed) {
    std::vector<std::string> cells{opset == 0 ? "none" : std::to_string(opset),
                                   std::to_string(row[0])};
    for (size_t b = 0; b < result.tallies.size(); ++b)
      cells.push_back(std::to_string(row[1 + b]) + "/" + std::to_string(row[0]));
    table.add_row(cells);
  }
  os << "\nby opset (the model's ai.onnx opset):\n";
  table.print(os, 0);
}

/// One case on one backend; a model that could not be read fails the case with its reason.
conformance::CaseResult case_on_backend(const std::filesystem::path& case_dir,
                                        const Expected<LoadedModel>& model, Backend& backend,
                                        const conformance::ConformanceOptions& opt) {
  if (model) return conformance::run_case(case_dir, *model, backend, opt);
  conformance::CaseResult r;
  r.name = case_dir.filename().string();
  r.reason = model.status().to_string();
  return r;
}

}  // namespace

const char* case_status_name(conformance::CaseStatus s) {
  static constexpr EnumNames<conformance::CaseStatus, 3> kNames{
      {{conformance::CaseStatus::kPassed, "pass"},
       {conformance::CaseStatus::kFailed, "fail"},
       {conformance::CaseStatus::kUnsupported, "unsupported"}}};
  return enum_name(kNames, s).data();
}

bool ConformanceResult::any_failed() const {
  for (const auto& t : tallies)
    if (t.failed > 0) return true;
  return false;
}

Expected<ConformanceResult> conformance(const ConformanceOptions& o, const CallContext& ctx) {
  ConformanceResult out;
  std::vector<BackendSpec> specs = o.backends;
  if (specs.empty()) specs.push_back({"reference", {}});
  std::vector<std::unique_ptr<Backend>> backends;
  for (const auto& spec : specs) {
    ODB_ASSIGN_OR_RETURN(auto b, create_backend(spec));
    out.tallies.push_back({spec, {}, 0, 0, 0});
    backends.push_back(std::move(b));
  }
  ODB_ASSIGN_OR_RETURN(out.cases, find_all_cases(o));
  const conformance::ConformanceOptions opt{o.rtol, o.atol};
  for (size_t i = 0; i < out.cases.size(); ++i) {
    if (ctx.cancel.cancelled())
      return cancelled("conformance cancelled after " + std::to_string(i) + " cases");
    // Each case's model is read once: its opset, then every backend's run.
    const Expected<LoadedModel> model = load_model(out.cases[i] / "model.onnx");
    out.opsets.push_back(model ? model_opset(model->proto, "") : 0);
    for (size_t b = 0; b < backends.size(); ++b) {
      BackendTally& t = out.tallies[b];
      if (ctx.progress)
        ctx.progress(std::to_string(i + 1) + "/" + std::to_string(out.cases.size()) + " " +
                     t.spec.to_string() + ": " + out.cases[i].filename().string());
      conformance::CaseResult r = case_on_backend(out.cases[i], model, *backends[b], opt);
      (r.status == conformance::CaseStatus::kPassed   ? t.passed
       : r.status == conformance::CaseStatus::kFailed ? t.failed
                                                      : t.unsupported)++;
      t.results.push_back(std::move(r));
    }
  }
  return out;
}

nlohmann::json to_json(const ConformanceResult& result) {
  nlohmann::json j = tally_json(result.tallies.front(), result.opsets);
  j["backends"] = nlohmann::json::array();
  for (const auto& t : result.tallies) j["backends"].push_back(tally_json(t, result.opsets));
  return j;
}

void print_text(const ConformanceResult& result, std::ostream& os, bool color, bool failures_only) {
  const auto& tallies = result.tallies;
  std::vector<std::string> headers{"case"};
  for (const auto& t : tallies) headers.push_back(t.spec.to_string());
  if (tallies.size() == 1) headers.emplace_back("reason");
  report::Table table(headers);
  for (size_t i = 0; i < result.cases.size(); ++i) {
    bool all_pass = true;
    for (const auto& t : tallies)
      all_pass = all_pass && t.results[i].status == conformance::CaseStatus::kPassed;
    if (failures_only && all_pass) continue;
    std::vector<std::string> row{result.cases[i].filename().string()};
    for (const auto& t : tallies) {
      const auto s = t.results[i].status;
      row.push_back(report::colorize(case_status_name(s),
                                     s == conformance::CaseStatus::kPassed   ? "green"
                                     : s == conformance::CaseStatus::kFailed ? "red"
                                                                             : "yellow",
                                     color));
    }
    if (tallies.size() == 1) row.push_back(tallies[0].results[i].reason);
    table.add_row(row);
  }
  table.print(os, 0);
  if (tallies.size() > 1) {
    os << "\nfailure reasons:\n";
    for (const auto& t : tallies)
      for (const auto& r : t.results)
        if (r.status != conformance::CaseStatus::kPassed)
          os << "  " << t.spec.to_string() << " " << r.name << ": " << r.reason << "\n";
  }
  os << "\n";
  for (const auto& t : tallies)
    os << t.spec.to_string() << ": " << t.passed << " passed, " << t.failed << " failed, "
       << t.unsupported << " unsupported of " << t.results.size() << " cases\n";
  print_opset_table(result, os);
}

}  // namespace onnxdbg::api
