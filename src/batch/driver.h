// The batch's plan and its loop: models x commands become jobs (each with its key, its argv and
// its cached record when the report folder holds one); the loop submits the jobs that need a run
// to an Executor, runs a crashed one again up to `retries` times, and commits each record as its
// job ends.
#pragma once

#include <atomic>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "batch/executor.h"
#include "batch/jobs.h"
#include "onnxdbg/status.h"

namespace onnxdbg::batch {

/// One (model, command) of the batch.
struct PlannedJob {
  std::string model;                      ///< as found
  std::string model_sha256;               ///< "" when the model could not be read
  std::string command;                    ///< the command's text
  const CommandTraits* traits = nullptr;  ///< the command's (its name: run, lint, ...)
  std::string key;                        ///< "" when the job cannot run (no model)
  JobSpec spec;                           ///< argv (staging paths filled in when submitted)
  nlohmann::json record;                  ///< its record once done (see job_record); null before
  bool cached = false;                    ///< the record came from the cache
  int attempts = 0;                       ///< runs so far
};

/// What the plan needs besides models and commands.
struct PlanOptions {
  std::string onnxdbg_executable;
  std::filesystem::path report_dir;
  double timeout = 0;
  uint64_t max_memory = 0;
  bool rerun = false;  ///< ignore the cache
};

/// Every (model, command), model by model. A model that cannot be read is one `error` record per
/// command (its line says why), never run. A job the cache holds a final record of (pass, fail,
/// error) is done, `cached`, unless `rerun`.
std::vector<PlannedJob> plan_jobs(const std::vector<ModelEntry>& models,
                                  const std::vector<Command>& commands, const PlanOptions& options);

/// How the loop reports.
struct DriveOptions {
  std::filesystem::path report_dir;
  int retries = 1;                                   ///< runs again of a crashed job
  double timeout = 0;                                ///< for the records' words
  std::function<void(const std::string&)> progress;  ///< a status line, about once a second
  std::function<void(const PlannedJob&)> on_done;    ///< as each job gets its record
  std::function<bool()> cancelled;                   ///< asked between collects
};

/// Runs every job of `jobs` without a record, at most executor.capacity() at once. Identical keys
/// run once (the later jobs of a key take the first one's record). Returns true when all ran,
/// false when `cancelled` stopped it (the running jobs were killed and left without a record).
/// Errors: the executor's, or a record that cannot be written.
Expected<bool> drive(Executor& executor, std::vector<PlannedJob>& jobs,
                     const DriveOptions& options);

}  // namespace onnxdbg::batch
