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
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "onnxdbg/status.h"

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
  /// Files of `staging` the job reads (names relative to it): the Ray executor sends them with
  /// the task (reduce's candidate and its inputs for a --check command).
  std::vector<std::string> ship_files;
  /// "NAME=value" entries added to the job's environment (paths in `staging` are rewritten for
  /// the Ray node, as in argv).
  std::vector<std::string> environment;
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

/// `jobs` processes at once on this machine (argv[0] looked up on $PATH when it has no '/').
std::unique_ptr<Executor> make_local_executor(size_t jobs);

/// One Executor shared by threads that each run one job at a time (reduce's --check oracle, one
/// thread per slot): run() submits a job and waits for its own outcome. Thread-safe.
class SharedExecutor {
 public:
  explicit SharedExecutor(std::unique_ptr<Executor> executor);
  ~SharedExecutor();
  /// Runs `job` (its id is set here) and returns its outcome. `cancelled`, asked every 20 ms,
  /// true stops every job of the executor and returns ErrorCode::kCancelled. Errors: the
  /// executor's (its process ended).
  Expected<JobOutcome> run(JobSpec job, const std::function<bool()>& cancelled);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

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

/// make_ray_executor with the defaults filled in: `address` "" is $RAY_ADDRESS, `python` "" is
/// $ONNXDBG_PYTHON or python3, the script is found next to `onnxdbg_executable` (""
/// find_onnxdbg_executable()). Errors: kInvalidArgument for no address (naming --address and
/// $RAY_ADDRESS), and those of make_ray_executor and the finders.
Expected<std::unique_ptr<Executor>> connect_ray(std::string address, std::string python,
                                                std::string onnxdbg_executable, size_t jobs,
                                                int retries, const std::filesystem::path& log);

/// The Ray executor's script: $ONNXDBG_RAY_EXECUTOR, else python/onnxdbg/ray_executor.py of the
/// build tree next to `onnxdbg_executable`, of the source tree, or share/onnxdbg of an install.
/// Errors: kNotFound naming where it looked.
Expected<std::string> find_ray_executor_script(const std::string& onnxdbg_executable);

/// The onnxdbg executable jobs run: $ONNXDBG_CLI, this process when it is onnxdbg, or the one
/// of the build tree or the install. Errors: kNotFound naming where it looked.
Expected<std::string> find_onnxdbg_executable();

}  // namespace onnxdbg::batch
