// `onnxdbg conformance`: run ONNX backend test folders (model.onnx + test_data_set_N) on one or
// more backends and print pass / fail / unsupported per case with each failure's reason.
#include "conformance/conformance.h"

#include <unistd.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "backends/backend.h"
#include "cli/commands.h"
#include "report/table.h"

namespace onnxdbg::cli {

namespace {

struct ConformanceArgs {
  std::vector<std::string> dirs;
  std::string backends = "reference";
  std::string filter;
  double rtol = 1e-3;
  double atol = 1e-7;
  bool json = false;
  bool failures_only = false;
};

const char* status_name(conformance::CaseStatus s) {
  switch (s) {
    case conformance::CaseStatus::kPassed:
      return "pass";
    case conformance::CaseStatus::kFailed:
      return "fail";
    case conformance::CaseStatus::kUnsupported:
      return "unsupported";
  }
  return "fail";
}

struct BackendTally {
  BackendSpec spec;
  std::vector<conformance::CaseResult> results;
  int passed = 0, failed = 0, unsupported = 0;
};

int conformance_command(const ConformanceArgs& a) {
  std::vector<BackendTally> tallies;
  std::vector<std::unique_ptr<Backend>> backends;
  size_t pos = 0;
  while (pos <= a.backends.size()) {
    const size_t comma = a.backends.find(',', pos);
    const std::string item =
        a.backends.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    if (!item.empty()) {
      auto spec = BackendSpec::parse(item);
      if (!spec) return report_error(spec.status());
      auto b = create_backend(*spec);
      if (!b) return report_error(b.status());
      tallies.push_back({*spec, {}, 0, 0, 0});
      backends.push_back(std::move(*b));
    }
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  if (backends.empty()) return report_error(invalid_argument("--backends lists no backend"));

  std::vector<std::filesystem::path> roots;
  for (const auto& d : a.dirs) {
    std::error_code ec;
    if (!std::filesystem::is_directory(d, ec))
      return report_error(not_found("'" + d + "' is not a folder of ONNX backend test cases"));
    roots.emplace_back(d);
  }
  auto cases = conformance::find_cases(roots);
  if (!a.filter.empty())
    std::erase_if(cases, [&](const auto& c) {
      return c.filename().string().find(a.filter) == std::string::npos;
    });
  if (cases.empty())
    return report_error(
        not_found("no test case (a folder with model.onnx) under the given folders"));

  const bool tty = isatty(2) && !a.json;
  const conformance::ConformanceOptions opt{a.rtol, a.atol};
  for (size_t i = 0; i < cases.size(); ++i) {
    for (size_t b = 0; b < backends.size(); ++b) {
      if (tty)
        std::cerr << "\r\x1b[K[onnxdbg] " << i + 1 << "/" << cases.size() << " "
                  << tallies[b].spec.to_string() << ": " << cases[i].filename().string()
                  << std::flush;
      auto r = conformance::run_case(cases[i], *backends[b], opt);
      auto& t = tallies[b];
      (r.status == conformance::CaseStatus::kPassed   ? t.passed
       : r.status == conformance::CaseStatus::kFailed ? t.failed
                                                      : t.unsupported)++;
      t.results.push_back(std::move(r));
    }
  }
  if (tty) std::cerr << "\r\x1b[K" << std::flush;

  bool any_failed = false;
  for (const auto& t : tallies) any_failed = any_failed || t.failed > 0;
  if (a.json) {
    auto tally_json = [](const BackendTally& t) {
      nlohmann::json j;
      j["backend"] = t.spec.to_string();
      j["passed"] = t.passed;
      j["failed"] = t.failed;
      j["unsupported"] = t.unsupported;
      j["total"] = t.results.size();
      j["cases"] = nlohmann::json::array();
      for (const auto& r : t.results)
        j["cases"].push_back(
            {{"case", r.name}, {"status", status_name(r.status)}, {"reason", r.reason}});
      return j;
    };
    nlohmann::json j = tally_json(tallies.front());
    j["backends"] = nlohmann::json::array();
    for (const auto& t : tallies) j["backends"].push_back(tally_json(t));
    std::cout << j.dump(2) << "\n";
    return any_failed ? kExitMismatch : kExitOk;
  }

  const bool color = report::use_color(1);
  std::vector<std::string> headers{"case"};
  for (const auto& t : tallies) headers.push_back(t.spec.to_string());
  if (tallies.size() == 1) headers.push_back("reason");
  report::Table table(headers);
  for (size_t i = 0; i < cases.size(); ++i) {
    bool all_pass = true;
    for (const auto& t : tallies)
      all_pass = all_pass && t.results[i].status == conformance::CaseStatus::kPassed;
    if (a.failures_only && all_pass) continue;
    std::vector<std::string> row{cases[i].filename().string()};
    for (const auto& t : tallies) {
      const auto s = t.results[i].status;
      row.push_back(report::colorize(status_name(s),
                                     s == conformance::CaseStatus::kPassed   ? "green"
                                     : s == conformance::CaseStatus::kFailed ? "red"
                                                                             : "yellow",
                                     color));
    }
    if (tallies.size() == 1) row.push_back(tallies[0].results[i].reason);
    table.add_row(row);
  }
  table.print(std::cout, 0);
  if (tallies.size() > 1) {
    std::cout << "\nfailure reasons:\n";
    for (const auto& t : tallies)
      for (const auto& r : t.results)
        if (r.status != conformance::CaseStatus::kPassed)
          std::cout << "  " << t.spec.to_string() << " " << r.name << ": " << r.reason << "\n";
  }
  std::cout << "\n";
  for (const auto& t : tallies)
    std::cout << t.spec.to_string() << ": " << t.passed << " passed, " << t.failed << " failed, "
              << t.unsupported << " unsupported of " << t.results.size() << " cases\n";
  return any_failed ? kExitMismatch : kExitOk;
}

}  // namespace

void add_conformance_command(CLI::App& app, CommandContext& ctx) {
  auto args = std::make_shared<ConformanceArgs>();
  auto* cmd = app.add_subcommand(
      "conformance",
      "Run ONNX backend test cases (folders with model.onnx and test_data_set_N/) on backends.");
  cmd->add_option("dirs", args->dirs,
                  "Case folders, or folders of case folders (e.g. "
                  "/usr/share/libonnx-testdata/data/node)")
      ->required();
  cmd->add_option("--backends,--backend", args->backends,
                  "Comma-separated backends to run, each NAME[:KEY=VALUE]...")
      ->capture_default_str();
  cmd->add_option("--filter", args->filter, "Only cases whose folder name contains this text");
  cmd->add_option("--rtol", args->rtol, "Relative tolerance")->capture_default_str();
  cmd->add_option("--atol", args->atol, "Absolute tolerance")->capture_default_str();
  cmd->add_flag("--failures-only", args->failures_only,
                "List only cases that did not pass everywhere");
  cmd->add_flag("--json", args->json,
                "Print one JSON object (passed, failed, unsupported, total, cases)");
  cmd->footer(
      "Exit status: 0 when no case failed (unsupported cases do not count), 1 otherwise, 2 on a "
      "usage error.");
  cmd->callback([args, &ctx] { ctx.exit_code = conformance_command(*args); });
}

}  // namespace onnxdbg::cli
