// A finished job's record and the report folder's cache of them: REPORT/jobs/<key>/ holds
// record.json (what summary.json's row says), output.json (the command's --json), stderr.txt and
// the files the command wrote (page.html, reduced.onnx). A job's folder is filled under
// REPORT/.staging and renamed into place whole, so a reader (or a second batch writing the same
// key) never sees half of one.
#pragma once

#include <array>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "batch/executor.h"
#include "onnxdbg/status.h"

namespace onnxdbg::batch {

/// A job's statuses, in the order reports list them.
inline constexpr std::array<std::string_view, 5> kJobStatuses{"pass", "fail", "error", "timeout",
                                                              "crashed"};

/// The most of a job's stdout (its --json) kept; the summary reads its first 256 MiB.
inline constexpr size_t kMaxJobOutput = size_t{1} << 30;

/// The record of a job from its outcome, its stdout `output` (the command's --json, read once
/// by the caller) and the files in its folder `staging`: {status, exit_code, line, seconds,
/// attempts, page, details, cause}. status: pass (exit 0), fail (1), error (2 or any other exit
/// status, or lost before it ran), timeout, crashed (a signal, or its Ray worker lost). `command`
/// is the command's name (run, lint, ...); `timeout` says what a timeout's line names.
nlohmann::json job_record(const JobOutcome& outcome, std::string_view output,
                          const std::filesystem::path& staging, std::string_view command,
                          double timeout, int attempts);

/// Whether a record's status is an answer worth keeping on --resume (pass, fail, error), rather
/// than a run to try again (timeout, crashed).
bool is_final(const nlohmann::json& record);

/// A fresh staging folder for one run of job `key` (REPORT/.staging/<key>.<pid>.<n>).
Expected<std::filesystem::path> make_staging(const std::filesystem::path& report_dir,
                                             const std::string& key);

/// Writes `record` and, when the job wrote a stdout.json, its `output` as output.json (the paths
/// in it that name `staging` renamed to the job's final folder) into `staging` and moves it to
/// REPORT/jobs/<key>, replacing an older one (whose folder is removed). Errors: kInvalidArgument
/// naming the folder that cannot be written.
Status commit_job(const std::filesystem::path& report_dir, const std::string& key,
                  const std::filesystem::path& staging, const nlohmann::json& record,
                  std::string output);

/// The record of job `key` in the cache, if its folder holds a readable one.
std::optional<nlohmann::json> cached_record(const std::filesystem::path& report_dir,
                                            const std::string& key);

}  // namespace onnxdbg::batch
