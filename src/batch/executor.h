// Where a batch's jobs run: an Executor starts onnxdbg processes and tells when they end. The local
// executor runs them on this machine, each in a process group of its own with its data size
// limited (RLIMIT_DATA) and killed at its deadline; the Ray executor hands them to
// python/onnxdbg/ray_executor.py, which runs them as Ray tasks on a cluster and writes their
// files back into each job's folder here. Both report the same JobOutcome, so the rest of the
// batch does not know which one ran a job.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"

namespace onnxdbg::batch {

/// One job as an executor runs it.
struct JobSpec {
  size_t id = 0;                  ///< the caller's number for it
  std::vector<std::string> argv;  ///< argv[0]: the onnxdbg executable
  size_t model_arg = 1;           ///< argv[model_arg] is the model's path
  /// The job's folder: the job's stdout goes to stdout.json, its stderr to stderr.txt, and the
  /// files its argv names in the folder (page.html, reduced.onnx) are written there.
  std::filesystem::path staging;
  double timeout = 0;       ///< seconds; 0: none
  uint64_t max_memory = 0;  ///< bytes of its data size limit; 0: none
  bool ship_model = false;  ///< Ray: send the model's bytes with the task (no external data)
};

/// How a job ended.
struct JobOutcome {
  size_t id = 0;
  int exit_code = -1;      ///< its exit status; -1 when it did not exit
  int signal = 0;          ///< the signal that ended it; 0 when none
  bool timed_out = false;  ///< killed at its deadline
  double seconds = 0;      ///< wall time
  std::string lost;  ///< why the executor lost it (its Ray worker or node died; it could not start)
};

class Executor {
 public:
  virtual ~Executor() = default;
  /// Jobs it runs at once; the batch submits no more than that before collecting.
  virtual size_t capacity() const = 0;
  /// Starts `job` (or queues it with the cluster). An error here stops the batch.
  virtual Status submit(const JobSpec& job) = 0;
  /// The outcomes of jobs that ended, waiting up to `wait` for one when none has yet. Errors:
  /// the executor itself failed (the Ray executor's process ended), naming why.
  virtual Expected<std::vector<JobOutcome>> collect(std::chrono::milliseconds wait) = 0;
  /// Kills every job still running (Ctrl-C); their outcomes are never reported.
  virtual void stop() = 0;
};

/// `jobs` onnxdbg processes at once on this machine.
std::unique_ptr<Executor> make_local_executor(size_t jobs);

/// Starts `python script --address ADDRESS --retries RETRIES` and waits (up to 120 s) for it to
/// say it reached the cluster; `jobs` tasks are then in flight at once (0: the cluster's CPUs).
/// Errors: kInvalidArgument with its one-sentence reason (no cluster at the address, Ray not
/// installed: "pip install ray"), or when it cannot start; nothing is submitted then. The script's
/// own log goes to `log`.
Expected<std::unique_ptr<Executor>> make_ray_executor(const std::string& python,
                                                      const std::string& script,
                                                      const std::string& address, size_t jobs,
                                                      int retries,
                                                      const std::filesystem::path& log);

/// The Ray executor's script: $ONNXDBG_RAY_EXECUTOR, else python/onnxdbg/ray_executor.py of the
/// build tree next to `onnxdbg_executable`, of the source tree, or share/onnxdbg of an install.
/// Errors: kNotFound naming where it looked.
Expected<std::string> find_ray_executor_script(const std::string& onnxdbg_executable);

/// The onnxdbg executable jobs run: $ONNXDBG_CLI, this process when it is onnxdbg, or the one
/// of the build tree or the install. Errors: kNotFound naming where it looked.
Expected<std::string> find_onnxdbg_executable();

}  // namespace onnxdbg::batch
