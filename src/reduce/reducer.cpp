// The reduction driver: candidate verification, result cache, journal, parallel oracle calls,
// best-so-far output, artifacts and progress (see reducer.h).
#include "reduce/reducer.h"

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

namespace onnxdbg::reduce {

namespace {

size_t symmetric_difference(const std::vector<int>& a, const std::vector<int>& b) {
  size_t i = 0, j = 0, d = 0;
  while (i < a.size() || j < b.size()) {
    if (j == b.size() || (i < a.size() && a[i] < b[j]))
      ++d, ++i;
    else if (i == a.size() || b[j] < a[i])
      ++d, ++j;
    else
      ++i, ++j;
  }
  return d;
}

// Why a candidate was invalid, in a few words, for the summary's breakdown.
std::string invalid_reason(const std::string& message) {
  if (message.rfind("ONNX checker", 0) == 0) return "ONNX checker";
  if (message.rfind("shape inference", 0) == 0) return "shape inference";
  if (message.find("--no-reduce-inputs") != std::string::npos) return "--no-reduce-inputs";
  if (message.find("--no-reduce-outputs") != std::string::npos) return "--no-reduce-outputs";
  if (message.find("no outputs") != std::string::npos) return "no outputs";
  if (message.find("no nodes") != std::string::npos) return "no nodes";
  if (message.find("golden value") != std::string::npos) return "no input values";
  if (message.find("type of") != std::string::npos) return "unknown type";
  return "other";
}

bool word_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '/';
}

}  // namespace

std::string mask_signature(const std::string& raw, const std::vector<std::string>& names) {
  std::string s = raw;
  for (const auto& name : names) {
    for (size_t p = s.find(name); p != std::string::npos; p = s.find(name, p + 1)) {
      const size_t end = p + name.size();
      if ((p > 0 && word_char(s[p - 1])) || (end < s.size() && word_char(s[end]))) continue;
      s.replace(p, name.size(), "<name>");
    }
  }
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (std::isdigit(static_cast<unsigned char>(s[i]))) {
      if (i == 0 || !std::isdigit(static_cast<unsigned char>(s[i - 1]))) out += 'N';
      continue;
    }
    out += s[i];
  }
  return out;
}

Reducer::Reducer(const Original& original, Oracle& oracle, ReducerOptions options)
    : original_(original), oracle_(oracle), options_(std::move(options)) {
  start_time_ = std::chrono::steady_clock::now();
  // Names of fewer than three characters ("x", "y") would mask parts of ordinary words.
  std::set<std::string> names;
  auto add = [&](const std::string& n) {
    if (n.size() >= 3) names.insert(n);
  };
  const auto& g = original_.model.graph();
  for (const auto& n : g.node()) {
    add(n.name());
    for (const auto& v : n.input()) add(v);
    for (const auto& v : n.output()) add(v);
  }
  for (const auto& v : g.input()) add(v.name());
  for (const auto& v : g.output()) add(v.name());
  for (const auto& t : g.initializer()) add(t.name());
  names_.assign(names.begin(), names.end());
  std::stable_sort(names_.begin(), names_.end(),
                   [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
}

void Reducer::judge(OracleVerdict& v) {
  if (v.signature.empty()) return;
  v.signature = mask_signature(v.signature, names_);
  if (options_.any_failure || !v.fails || signature_.empty() || v.signature == signature_) return;
  v.fails = false;
  v.failed_differently = true;
  ++different_;
  v.detail = "fails differently from the original, so counts as a pass: " + v.detail;
}

double Reducer::elapsed_seconds() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_time_).count();
}

Expected<OracleVerdict> Reducer::start() {
  if (options_.resume && !options_.journal.empty()) {
    std::ifstream in(options_.journal);
    std::string line;
    int64_t n = 0;
    while (std::getline(in, line)) {
      auto j = nlohmann::json::parse(line, nullptr, false);
      // A line of another shape (an older onnxdbg, an edit by hand) is skipped, never thrown on.
      if (j.is_discarded() || !j.is_object() || !j.contains("hash") || !j["hash"].is_string() ||
          !j.contains("fails") || !j["fails"].is_boolean())
        continue;
      JournalEntry e;
      e.failed = j["fails"].get<bool>() ||
                 (j.contains("failed_differently") && j["failed_differently"].is_boolean() &&
                  j["failed_differently"].get<bool>());
      if (j.contains("signature") && j["signature"].is_string())
        e.signature = j["signature"].get<std::string>();
      journal_entries_[j["hash"].get<std::string>()] = std::move(e);
      ++n;
    }
    add_note("resumed with " + std::to_string(n) + " verdicts from " + options_.journal.string());
  }
  if (!options_.journal.empty()) {
    journal_.open(options_.journal, options_.resume ? std::ios::app : std::ios::trunc);
    if (!journal_)
      add_note("cannot write the journal '" + options_.journal.string() +
               "'; --resume will not work");
  }
  if (!options_.artifacts.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(options_.artifacts / "good", ec);
    std::filesystem::create_directories(options_.artifacts / "bad", ec);
    if (ec) {
      artifacts_ok_ = false;
      add_note("cannot create artifact folders in '" + options_.artifacts.string() +
               "': " + ec.message() + "; artifacts are not kept");
    }
  }
  current_ = whole_model(original_);
  ODB_ASSIGN_OR_RETURN(BuiltCandidate b, build_candidate(original_, current_));
  ++oracle_calls_;
  ODB_ASSIGN_OR_RETURN(OracleVerdict v, oracle_.test(b, 0));
  if (v.fails && !options_.any_failure) oracle_.anchor(b, v);
  judge(v);
  if (v.fails) signature_ = v.signature;
  judge_journal();
  if (v.timed_out) ++timeouts_;
  if (auto it = journal_verdicts_.find(b.hash);
      it != journal_verdicts_.end() && it->second != v.fails)
    add_note("the oracle is flaky: the original model " +
             std::string(v.fails ? "failed" : "passed") + " now but " +
             (it->second ? "failed" : "passed") + " in the journal's run");
  record(b, v);
  current_built_ = std::move(b);
  if (v.fails) ODB_RETURN_IF_ERROR(save_candidate(current_built_, options_.output));
  report_progress();
  return v;
}

void Reducer::judge_journal() {
  for (const auto& [hash, e] : journal_entries_) {
    const bool fails = e.failed && (options_.any_failure || e.signature.empty() ||
                                    signature_.empty() || e.signature == signature_);
    journal_verdicts_[hash] = fails;
    cache_.emplace(hash, fails);
  }
}

void Reducer::record(const BuiltCandidate& b, const OracleVerdict& v) {
  cache_[b.hash] = v.fails;
  if (journal_.is_open()) {
    nlohmann::json j = {{"hash", b.hash},
                        {"fails", v.fails},
                        {"nodes", b.nodes.size()},
                        {"iteration", oracle_calls_},
                        {"detail", v.detail}};
    if (!v.signature.empty()) j["signature"] = v.signature;
    if (v.failed_differently) j["failed_differently"] = true;
    journal_ << j.dump() << "\n";
    journal_.flush();
  }
  if (!options_.artifacts.empty() && artifacts_ok_) {
    const auto path = options_.artifacts / (v.fails ? "bad" : "good") /
                      ("iter_" + std::to_string(oracle_calls_) + ".onnx");
    if (Status st = save_candidate(b, path); !st) {
      artifacts_ok_ = false;
      add_note(st.message() + "; artifacts are no longer kept (the reduction goes on)");
    }
  }
}

Status Reducer::accept(const Candidate& c, BuiltCandidate b) {
  const int64_t before = static_cast<int64_t>(current_built_.nodes.size());
  current_ = c;
  current_.nodes = b.nodes;
  current_built_ = std::move(b);
  stats_[phase_].nodes_removed += before - static_cast<int64_t>(current_built_.nodes.size());
  return save_candidate(current_built_, options_.output);
}

Expected<bool> Reducer::evaluate(std::vector<Pending>& window, size_t& first_fail) {
  std::vector<Expected<OracleVerdict>> verdicts(window.size(), internal_error("not run"));
  if (window.size() == 1) {
    verdicts[0] = oracle_.test(window[0].built, 0);
  } else {
    std::vector<std::thread> threads;
    for (size_t k = 0; k < window.size(); ++k)
      threads.emplace_back(
          [&, k] { verdicts[k] = oracle_.test(window[k].built, static_cast<int>(k)); });
    for (auto& t : threads) t.join();
  }
  bool any = false;
  for (size_t k = 0; k < window.size(); ++k) {
    if (!verdicts[k]) return verdicts[k].status();
    judge(*verdicts[k]);
    ++oracle_calls_;
    ++stats_[phase_].oracle_calls;
    if (verdicts[k]->timed_out) ++timeouts_;
    record(window[k].built, *verdicts[k]);
    if (verdicts[k]->fails && !any) {
      any = true;
      first_fail = k;
    }
  }
  return any;
}

Expected<int> Reducer::try_batch(const std::vector<Candidate>& batch) {
  const size_t width = static_cast<size_t>(std::max(1, oracle_.max_parallel()));
  std::vector<Pending> window;
  std::vector<Candidate> passed_here;
  int result = -1;
  auto flush = [&]() -> Expected<bool> {
    if (window.empty()) return false;
    size_t k = 0;
    ODB_ASSIGN_OR_RETURN(bool failed, evaluate(window, k));
    for (size_t i = 0; i < window.size(); ++i)
      if (!(failed && i == k) && !cache_.at(window[i].built.hash)) {
        Candidate p = batch[window[i].index];
        p.nodes = window[i].built.nodes;
        passing_.push_back(std::move(p));
      }
    if (failed) {
      result = static_cast<int>(window[k].index);
      ODB_RETURN_IF_ERROR(accept(batch[window[k].index], std::move(window[k].built)));
    }
    window.clear();
    report_progress();
    return failed;
  };
  for (size_t i = 0; i < batch.size(); ++i) {
    auto built = build_candidate(original_, batch[i]);
    if (built && built->feeds.empty() && !built->inputs.empty() && oracle_.needs_values())
      built = invalid_argument("no golden values to feed the candidate's inputs");
    if (built) {
      if (Status st = verify_candidate(original_, *built); !st) built = st;
    }
    if (!built) {
      ++invalid_;
      ++invalid_reasons_[invalid_reason(built.status().message())];
      continue;
    }
    if (auto it = cache_.find(built->hash); it != cache_.end()) {
      ++cache_hits_;
      if (!it->second) continue;
      // A cached failure: earlier candidates still waiting must be tested first.
      ODB_ASSIGN_OR_RETURN(bool failed, flush());
      if (failed) return result;
      ODB_RETURN_IF_ERROR(accept(batch[i], std::move(*built)));
      report_progress();
      return static_cast<int>(i);
    }
    // The same candidate twice in one window would be tested twice: test it once.
    bool duplicate = false;
    for (const auto& p : window) duplicate = duplicate || p.built.hash == built->hash;
    if (duplicate) continue;
    window.push_back({i, std::move(*built)});
    if (window.size() == width) {
      ODB_ASSIGN_OR_RETURN(bool failed, flush());
      if (failed) return result;
    }
  }
  ODB_ASSIGN_OR_RETURN(bool failed, flush());
  (void)failed;
  return result;
}

Expected<OracleVerdict> Reducer::confirm_current() {
  ++oracle_calls_;
  ODB_ASSIGN_OR_RETURN(OracleVerdict v, oracle_.test(current_built_, 0));
  judge(v);
  if (v.fails != cache_[current_built_.hash])
    add_note("the oracle is flaky: the reduced model " +
             std::string(v.fails ? "failed" : "passed") + " when tested again but " +
             (cache_[current_built_.hash] ? "failed" : "passed") + " before (" + v.detail + ")");
  return v;
}

const Candidate* Reducer::min_good() const {
  const Candidate* best = nullptr;
  size_t best_d = 0;
  for (const auto& p : passing_) {
    const size_t d = symmetric_difference(p.nodes, current_.nodes);
    if (!best || d < best_d || (d == best_d && p.nodes.size() < best->nodes.size())) {
      best = &p;
      best_d = d;
    }
  }
  return best;
}

void Reducer::report_progress() {
  if (!options_.progress) return;
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "reduce: %s iteration %lld, %zu of %d nodes left, %lld oracle calls, %lld cache "
                "hits, %lld invalid skipped, %.1f s",
                phase_.empty() ? "" : (phase_ + ":").c_str(), static_cast<long long>(oracle_calls_),
                current_built_.nodes.size(), original_.model.graph().node_size(),
                static_cast<long long>(oracle_calls_), static_cast<long long>(cache_hits_),
                static_cast<long long>(invalid_), elapsed_seconds());
  options_.progress(buf);
}

}  // namespace onnxdbg::reduce
