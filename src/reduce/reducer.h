// The reduction driver every strategy works through: it builds and verifies candidates, answers
// from the result cache (keyed by the candidate's content hash) or the oracle (several at once
// with -j), keeps the current failing candidate, and writes the best model after every success,
// the journal, the progress line and the good/ and bad/ artifacts.
#pragma once

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "onnxdbg/reduce_options.h"
#include "reduce/candidate.h"
#include "reduce/oracle.h"

namespace onnxdbg::reduce {

/// Where the reducer writes and how it reports.
struct ReducerOptions {
  std::filesystem::path output;     ///< best model so far, rewritten after every success
  std::filesystem::path journal;    ///< one JSON line per oracle verdict (--resume reads it)
  bool resume = false;              ///< pre-fill the cache from `journal`
  std::filesystem::path artifacts;  ///< --artifacts: good/ and bad/ iter_<N>.onnx; empty: none
  /// Called with a status line after every batch ("iteration 12, 35 of 70 nodes, ...").
  std::function<void(const std::string&)> progress;
  /// --any-failure: a candidate that fails in any way is accepted. By default a failure whose
  /// signature (OracleVerdict::signature, masked) differs from the original's counts as a pass,
  /// with a note in the journal.
  bool any_failure = false;
};

/// `raw` (an OracleVerdict::signature) with the parts that change from candidate to candidate
/// masked: each of `names` (longest first, where it stands as a whole word) becomes "<name>" and
/// every run of digits "N". `names` are the model's node and value names.
std::string mask_signature(const std::string& raw, const std::vector<std::string>& names);

class Reducer {
 public:
  Reducer(const Original& original, Oracle& oracle, ReducerOptions options);

  /// Tests the original model (never from the cache). Returns its verdict; the caller stops when
  /// it passes. Errors: the oracle's (e.g. the check command does not exist), or the original
  /// cannot be made a candidate.
  Expected<OracleVerdict> start();

  const Original& original() const { return original_; }
  const Candidate& current() const { return current_; }
  const BuiltCandidate& current_built() const { return current_built_; }
  int parallelism() const { return oracle_.max_parallel(); }

  /// Tests `batch` in order, up to parallelism() candidates at once, and makes the first that
  /// still fails the current candidate (written to the output at once). Candidates that cannot be
  /// built or fail verification are skipped (counted) and never reach the oracle. Returns the
  /// index of the accepted candidate, or -1 when none fails. The answer does not depend on -j:
  /// a window is only evaluated when no earlier candidate already failed.
  /// Errors: the oracle's, or the output cannot be written.
  Expected<int> try_batch(const std::vector<Candidate>& batch);

  /// Tests the current candidate again without the cache; a different verdict means the oracle
  /// is flaky. Errors: the oracle's.
  Expected<OracleVerdict> confirm_current();

  /// The passing candidate with the fewest nodes among those closest to the current one
  /// (smallest symmetric difference of node sets), or nullptr when none passed.
  const Candidate* min_good() const;

  /// Whether the oracle has passed any candidate (a reduction where none passed suggests an
  /// oracle that fails for a reason other than the model).
  bool saw_passing() const { return !passing_.empty(); }
  int64_t oracle_calls() const { return oracle_calls_; }
  int64_t cache_hits() const { return cache_hits_; }
  int64_t invalid() const { return invalid_; }
  /// Invalid candidates by reason ("no outputs", "ONNX checker", "--no-reduce-inputs", ...).
  const std::map<std::string, int64_t>& invalid_reasons() const { return invalid_reasons_; }
  /// Candidates that failed, but not as the original did, and so counted as passes.
  int64_t failed_differently() const { return different_; }
  /// The original's failure signature (masked), "" when the oracle gives none.
  const std::string& signature() const { return signature_; }
  int64_t timeouts() const { return timeouts_; }
  double elapsed_seconds() const;
  std::vector<std::string> notes() const { return notes_; }
  void add_note(std::string n) { notes_.push_back(std::move(n)); }
  /// Sets the strategy name shown in the progress line and counted in stats().
  void set_phase(const std::string& strategy) { phase_ = strategy; }
  std::map<std::string, StrategyStats>& stats() { return stats_; }

 private:
  struct Pending {
    size_t index;
    BuiltCandidate built;
  };
  Expected<bool> evaluate(std::vector<Pending>& window, size_t& first_fail);
  void record(const BuiltCandidate& b, const OracleVerdict& v);
  void judge(OracleVerdict& v);
  Status accept(const Candidate& c, BuiltCandidate b);
  void report_progress();

  const Original& original_;
  Oracle& oracle_;
  ReducerOptions options_;
  Candidate current_;
  BuiltCandidate current_built_;
  std::map<std::string, bool> cache_;
  std::map<std::string, bool> journal_verdicts_;  // from --resume, for flakiness
  /// A verdict as the journal holds it: whether the oracle failed the candidate at all (in any
  /// way) and the failure's signature, judged again against this run's original (judge_journal).
  struct JournalEntry {
    bool failed = false;
    std::string signature;
  };
  std::map<std::string, JournalEntry> journal_entries_;
  /// Turns journal_entries_ into verdicts for this run: a failure counts when this run accepts
  /// any failure, when either signature is unknown, or when the signatures are the same (a
  /// journal written with --any-failure, or for another failure, resumes correctly).
  void judge_journal();
  std::vector<Candidate> passing_;
  std::ofstream journal_;
  std::string phase_;
  std::map<std::string, StrategyStats> stats_;
  std::vector<std::string> notes_;
  bool artifacts_ok_ = true;
  int64_t oracle_calls_ = 0, cache_hits_ = 0, invalid_ = 0, timeouts_ = 0, different_ = 0;
  std::map<std::string, int64_t> invalid_reasons_;
  std::vector<std::string> names_;  // the model's names, longest first (mask_signature)
  std::string signature_;
  std::chrono::steady_clock::time_point start_time_;
};

}  // namespace onnxdbg::reduce
