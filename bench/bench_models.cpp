// bench_models: load and run times and peak memory of each backend on the public models, with
// ratios against ONNX Runtime. Every (model, backend) pair runs in a fresh child process (one
// warm-up run, then at least --iterations timed runs), so peak memory is that backend's alone.
//
//   bench_models [--iterations N] [--min-seconds S] [--rounds R] [--backends SPEC,...] MODELS_DIR
//                MODEL_LIST
//
// Timed runs go on past N until they add up to S seconds (default 1), at most 1000 of them, so
// that the median of a sub-millisecond model is not that of five noisy samples. With R rounds
// (default 1) the backends of a model take turns R times, each turn in a fresh child, and the
// medians are over all of a backend's runs: a machine that slows down for a few seconds (other
// work on the host) then slows every backend alike instead of the one whose turn it was.
//
// MODEL_LIST is tests/public_models.txt ("file  onnxdbg-run-arguments" per line; only
// --input-shapes and --val-range are read). The PP-OCR detector runs at 1x3x640x640, its usual
// size. Backends default to one thread each (onnxruntime:threads=1, reference:threads=1,
// opencv:threads=1), then two (onnxruntime:threads=2, reference:threads=2). Each backend's ratios
// are against the ONNX Runtime run with the same threads= option (else the first one).
// Peak memory is ru_maxrss of the process that ran the model: the worker process for the isolated
// backends (reported back by it), the child process for the in-process reference.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "backends/backend.h"
#include "comparator/input_gen.h"
#include "model/model.h"
#include "reference/openblas_core.h"

using namespace onnxdbg;

namespace {

struct Measurement {
  bool ok = false;
  std::string error;
  double load_seconds = 0;
  std::vector<double> run_seconds;
  int64_t peak_rss_bytes = 0;
};

struct ModelCase {
  std::string file;
  std::vector<std::string> shapes, ranges;
};

std::vector<ModelCase> read_model_list(const std::string& path) {
  std::vector<ModelCase> out;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    std::istringstream ss(line);
    ModelCase c;
    if (!(ss >> c.file) || c.file[0] == '#') continue;
    std::vector<std::string>* target = nullptr;
    for (std::string w; ss >> w;) {
      if (w == "--input-shapes")
        target = &c.shapes;
      else if (w == "--val-range")
        target = &c.ranges;
      else if (w.rfind("--", 0) == 0)
        target = nullptr;
      else if (target)
        target->push_back(w);
    }
    if (c.file == "ch_PP-OCRv4_det_infer.onnx") c.shapes = {"x:1x3x640x640"};
    out.push_back(std::move(c));
  }
  return out;
}

// Runs in the child: everything from reading the model to the last timed run.
Measurement measure(const std::string& model_path, const ModelCase& c, const std::string& spec_text,
                    int iterations, double min_seconds) {
  Measurement m;
  auto fail = [&](const Status& st) {
    m.error = st.to_string();
    return m;
  };
  InputGenOptions gen;
  if (Status st = parse_input_shapes(c.shapes, gen.shapes); !st) return fail(st);
  if (Status st = parse_value_ranges(c.ranges, gen); !st) return fail(st);
  TensorMap inputs;
  {
    auto model = load_model(model_path);
    if (!model) return fail(model.status());
    auto in = generate_inputs(model->proto.graph(), gen);
    if (!in) return fail(in.status());
    inputs = std::move(*in);
  }
  auto spec = BackendSpec::parse(spec_text);
  if (!spec) return fail(spec.status());
  auto backend = create_backend(*spec);
  if (!backend) return fail(backend.status());
  auto session = (*backend)->load(model_path);
  if (!session) return fail(session.status());
  m.load_seconds = (*session)->info().load_seconds;
  double total = 0;
  for (int i = 0; i <= iterations || (total < min_seconds && i <= 1000); ++i) {  // 0: warm-up
    auto r = (*session)->run(inputs);
    if (!r) return fail(r.status());
    if (i > 0) {
      m.run_seconds.push_back(r->run_seconds);
      total += r->run_seconds;
    }
    m.peak_rss_bytes = std::max(m.peak_rss_bytes, r->peak_rss_bytes);
  }
  m.ok = true;
  return m;
}

// Forks a child for one measurement; the result comes back as one line on a pipe.
Measurement measure_in_child(const std::string& model_path, const ModelCase& c,
                             const std::string& spec, int iterations, double min_seconds) {
  Measurement m;
  int fds[2];
  if (pipe(fds) != 0) {
    m.error = "pipe failed";
    return m;
  }
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    Measurement r = measure(model_path, c, spec, iterations, min_seconds);
    std::ostringstream line;
    line.precision(9);
    if (r.ok) {
      line << "ok " << r.load_seconds << " " << r.peak_rss_bytes;
      for (double t : r.run_seconds) line << " " << t;
    } else {
      std::string e = r.error;
      std::replace(e.begin(), e.end(), '\n', ' ');
      line << "error " << e;
    }
    const std::string s = line.str();
    if (write(fds[1], s.data(), s.size()) < 0) _exit(2);
    _exit(0);
  }
  close(fds[1]);
  std::string text;
  char buf[4096];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;)
    text.append(buf, static_cast<size_t>(n));
  close(fds[0]);
  int wstatus = 0;
  rusage ru{};
  wait4(pid, &wstatus, 0, &ru);
  std::istringstream ss(text);
  std::string kind;
  ss >> kind;
  if (kind == "ok") {
    m.ok = true;
    ss >> m.load_seconds >> m.peak_rss_bytes;
    for (double t; ss >> t;) m.run_seconds.push_back(t);
    // The in-process reference reports its own process; wait4 tells the same from outside.
    if (m.peak_rss_bytes == 0) m.peak_rss_bytes = static_cast<int64_t>(ru.ru_maxrss) * 1024;
  } else {
    std::getline(ss, m.error);
    if (m.error.empty())
      m.error = "the benchmark child exited with status " + std::to_string(wstatus);
  }
  return m;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n == 0 ? 0 : n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

int main(int argc, char** argv) {
  reference::restart_with_better_openblas_core(argv);  // as the onnxdbg executable does
  int iterations = 5;
  double min_seconds = 1.0;
  int rounds = 1;
  std::string backends =
      "onnxruntime:threads=1,reference:threads=1,opencv:threads=1,onnxruntime:threads=2,"
      "reference:threads=2";
  std::vector<std::string> positional;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--iterations" && i + 1 < argc)
      iterations = std::max(1, std::atoi(argv[++i]));
    else if (a == "--min-seconds" && i + 1 < argc)
      min_seconds = std::atof(argv[++i]);
    else if (a == "--rounds" && i + 1 < argc)
      rounds = std::max(1, std::atoi(argv[++i]));
    else if (a == "--backends" && i + 1 < argc)
      backends = argv[++i];
    else
      positional.push_back(a);
  }
  if (positional.size() != 2) {
    std::cerr << "usage: bench_models [--iterations N] [--min-seconds S] [--rounds R] "
                 "[--backends SPEC,...] MODELS_DIR MODEL_LIST\n";
    return 2;
  }
  std::vector<std::string> specs;
  for (std::stringstream ss(backends); std::getline(ss, backends, ',');)
    if (!backends.empty()) specs.push_back(backends);

  std::printf(
      "at least %d timed runs and %.1f s after one warm-up, each backend in its own "
      "process, the backends taking %d turn(s); vs_ort: median / ONNX Runtime's median, "
      "min_vs_ort: fastest run / ONNX Runtime's fastest (steadier where other work shares the "
      "machine)\n",
      iterations, min_seconds, rounds);
  std::printf("%-36s %-22s %9s %10s %10s %8s %10s %9s %8s  %s\n", "model", "backend", "load_ms",
              "median_ms", "min_ms", "vs_ort", "min_vs_ort", "peak_MiB", "vs_ort", "status");
  for (const ModelCase& c : read_model_list(positional[1])) {
    const std::string path = positional[0] + "/" + c.file;
    std::map<std::string, Measurement> results;
    const Measurement* first_ort = nullptr;
    std::map<std::string, const Measurement*> ort_by_threads;
    const auto threads_of = [](const std::string& spec) {
      auto parsed = BackendSpec::parse(spec);
      return parsed ? parsed->option("threads", "") : std::string();
    };
    for (int round = 0; round < rounds; ++round)
      for (const auto& spec : specs) {
        Measurement m = measure_in_child(path, c, spec, iterations, min_seconds);
        Measurement& all = results[spec];
        if (round > 0 && !all.ok) continue;  // failed in an earlier round: keep that error
        if (round == 0 || !m.ok) {
          all = std::move(m);
          continue;
        }
        all.load_seconds = std::min(all.load_seconds, m.load_seconds);
        all.peak_rss_bytes = std::max(all.peak_rss_bytes, m.peak_rss_bytes);
        all.run_seconds.insert(all.run_seconds.end(), m.run_seconds.begin(), m.run_seconds.end());
      }
    for (const auto& spec : specs) {
      if (spec.rfind("onnxruntime", 0) != 0 || !results[spec].ok) continue;
      if (!first_ort) first_ort = &results[spec];
      ort_by_threads.emplace(threads_of(spec), &results[spec]);
    }
    for (const auto& spec : specs) {
      const Measurement& m = results[spec];
      const auto same = ort_by_threads.find(threads_of(spec));
      const Measurement* ort = same != ort_by_threads.end() ? same->second : first_ort;
      if (!m.ok) {
        std::printf("%-36s %-22s %9s %10s %10s %8s %10s %9s %8s  failed: %.80s\n", c.file.c_str(),
                    spec.c_str(), "-", "-", "-", "-", "-", "-", "-", m.error.c_str());
        continue;
      }
      const double med = median(m.run_seconds);
      const double mn = *std::min_element(m.run_seconds.begin(), m.run_seconds.end());
      const double mib = static_cast<double>(m.peak_rss_bytes) / (1024.0 * 1024.0);
      char t_ratio[32] = "-", min_ratio[32] = "-", m_ratio[32] = "-";
      if (ort) {
        std::snprintf(t_ratio, sizeof t_ratio, "%.2fx", med / median(ort->run_seconds));
        std::snprintf(min_ratio, sizeof min_ratio, "%.2fx",
                      mn / *std::min_element(ort->run_seconds.begin(), ort->run_seconds.end()));
        if (ort->peak_rss_bytes > 0)
          std::snprintf(
              m_ratio, sizeof m_ratio, "%.2fx",
              static_cast<double>(m.peak_rss_bytes) / static_cast<double>(ort->peak_rss_bytes));
      }
      std::printf("%-36s %-22s %9.1f %10.3f %10.3f %8s %10s %9.1f %8s  ok\n", c.file.c_str(),
                  spec.c_str(), m.load_seconds * 1e3, med * 1e3, mn * 1e3, t_ratio, min_ratio, mib,
                  m_ratio);
    }
    std::fflush(stdout);
  }
  return 0;
}
