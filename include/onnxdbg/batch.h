// api::batch: many models through many onnxdbg commands (`onnxdbg batch`, onnxdbg.batch). Every
// (model, command) is a job, run as an onnxdbg process with a timeout and a memory limit, on this
// machine (executor "local") or as Ray tasks on an existing cluster (executor "ray"); each
// finished job's result lands in a content-addressed cache under the report folder, so a batch
// run again runs only what is missing, and summary.json and index.html sum the batch up.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "onnxdbg/common.h"
#include "onnxdbg/options.h"
#include "onnxdbg/status.h"

namespace onnxdbg::api {

/// One job's result: a row of summary.json.
struct BatchJob {
  std::string model;         ///< the model's path as found (a list file's entries resolved)
  std::string model_sha256;  ///< of its bytes (external data files too); "" when unreadable
  std::string command;       ///< the command as given ("run --layerwise")
  std::string key;           ///< the cache key (sha256 hex); "" when the job could not run
  /// pass (exit 0) | fail (exit 1: backends disagree, lint errors) | error (exit 2: a malformed
  /// model, bad usage; or the job could not start) | timeout | crashed (killed by a signal, or
  /// its Ray worker lost, after `retries` runs again)
  std::string status;
  int exit_code = -1;   ///< the command's exit status; -1 when it did not exit
  std::string line;     ///< one line: the verdict, the first lint error, the error or the cause
  double seconds = 0;   ///< wall time of its last run
  int attempts = 0;     ///< runs it took (0: taken from the cache or never started)
  bool cached = false;  ///< taken from the report folder's cache, not run now
  std::string page;     ///< its HTML page relative to the report folder; "" when none
  /// What the command's --json said that the summary uses: verdict, first_divergent_node,
  /// backend_errors (run); errors, warnings (lint); null when it printed none.
  nlohmann::json details;
};

/// What `batch` runs and where.
struct BatchOptions {
  /// Model files, folders (searched recursively for *.onnx, in name order) and list files (a
  /// text file, not .onnx: one model per line, `PATH [OPTIONS...]`, '#' starts a comment, a
  /// relative PATH is relative to the list file's folder; the OPTIONS, e.g. `--input-shapes
  /// x:1x3x224x224`, go to this model's commands that take inputs: run, reduce,
  /// bisect-optimizers). A path that does not exist is one `error` row, not a stop.
  std::vector<std::string> models;
  /// onnxdbg commands without the model, as a shell would split them: "run --backends
  /// reference,onnxruntime --layerwise", "lint". Commands: run, lint, inspect, reduce (its
  /// output goes to the job's folder), bisect-optimizers. batch adds --json, and --html where the
  /// command writes a page; a command that gives them itself is refused.
  std::vector<std::string> commands;
  /// The report folder: jobs/<key>/ (each job's record.json, output.json, page.html, ...),
  /// summary.json, index.html. Created when missing.
  std::string report_dir;
  std::string executor{option_defaults::executor};  ///< "local" or "ray"
  std::string address{option_defaults::address};    ///< ray: HOST:PORT; "": $RAY_ADDRESS
  int jobs = option_defaults::batch_jobs;  ///< jobs at once; 0: this machine's (the cluster's) CPUs
  double timeout = option_defaults::job_timeout;  ///< seconds per job; 0: none
  uint64_t max_memory = 0;  ///< bytes one job may allocate (its RLIMIT_DATA); 0: no limit
  bool rerun = option_defaults::rerun;     ///< run every job again, cached or not
  int retries = option_defaults::retries;  ///< runs again of a crashed job before `crashed`
  /// The onnxdbg executable each job runs; "": $ONNXDBG_CLI, this process when it is onnxdbg,
  /// or the onnxdbg next to the backend worker / of the build tree.
  std::string onnxdbg_executable;
  /// The Python the ray executor runs (it needs `import ray`); "": $ONNXDBG_PYTHON or python3.
  std::string python;
  /// Called on the calling thread as each job ends (cached ones too), for a line per job.
  std::function<void(const BatchJob&)> on_job_done;
};

/// What `batch` did.
struct BatchResult {
  std::string report_dir;
  std::string executor;
  std::vector<BatchJob> jobs;  ///< in model order, then command order
  double seconds = 0;          ///< wall time of the whole batch
  int ran = 0;                 ///< jobs run now (the others came from the cache)
  bool cancelled = false;      ///< Ctrl-C stopped it: the jobs not finished are not in `jobs`
  Messages messages;
  /// Counts of jobs by status.
  int count(const std::string& status) const;
};

/// Runs the batch. Finished jobs' results are written (atomically, one folder per job) as they
/// end, summary.json and index.html at the end (also when cancelled, with the jobs finished).
/// Errors: kInvalidArgument for no model or command, an unknown command or executor, a command
/// that gives --json/--html/-o itself, a report folder that cannot be written, --executor ray
/// without a reachable cluster (naming the address; nothing is started) or without Ray
/// installed (naming `pip install ray`); kNotFound when no onnxdbg executable is found. A
/// missing or malformed model is a job of status `error`, not an error of the call.
Expected<BatchResult> batch(const BatchOptions& options, const CallContext& ctx = {});

/// summary.json: {onnxdbg_version, executor, seconds, counts, jobs: [...], fleet: {op_types,
/// backend_errors, slowest, crashes}}.
nlohmann::json to_json(const BatchResult& result);
/// The terminal summary: counts, the failed jobs, where the report is.
void print_text(const BatchResult& result, std::ostream& os, bool color);

}  // namespace onnxdbg::api
