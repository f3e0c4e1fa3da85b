// batch's jobs: command lines split as a shell does, the commands it refuses, models found in
// folders and list files, and cache keys that change with everything that can change an answer.
#include "batch/jobs.h"

#include <gtest/gtest.h>

#include <fstream>

#include "batch/record.h"
#include "batch/report.h"
#include "core/subprocess.h"
#include "core/temp_dir.h"

namespace onnxdbg::batch {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> split(std::string_view s) {
  auto r = split_command_line(s);
  EXPECT_TRUE(r.has_value()) << s;
  return r ? *r : std::vector<std::string>{};
}

TEST(BatchJobs, SplitsAsAShellDoes) {
  using V = std::vector<std::string>;
  EXPECT_EQ(split("run  --backends reference,onnxruntime\t--layerwise"),
            (V{"run", "--backends", "reference,onnxruntime", "--layerwise"}));
  EXPECT_EQ(split("run --input-shapes 'x:1x3 y:2' --val-range \"[-1,1]\""),
            (V{"run", "--input-shapes", "x:1x3 y:2", "--val-range", "[-1,1]"}));
  EXPECT_EQ(split(R"(a\ b "c\"d" 'e\f' "")"), (V{"a b", "c\"d", "e\\f", ""}));
  EXPECT_FALSE(split_command_line("run 'x").has_value());
  EXPECT_FALSE(split_command_line("run x\\").has_value());
}

TEST(BatchJobs, RefusesWhatBatchGivesItself) {
  EXPECT_TRUE(parse_command("run --layerwise").has_value());
  for (const char* bad : {"run --json", "lint --html=x.html", "reduce -o r.onnx", "diff", ""}) {
    auto c = parse_command(bad);
    EXPECT_FALSE(c.has_value()) << bad;
    if (!c) {
      EXPECT_EQ(c.status().code(), ErrorCode::kInvalidArgument);
    }
  }
  EXPECT_NE(std::string(parse_command("diff").status().message()).find("batch runs run, lint"),
            std::string::npos);
}

TEST(BatchJobs, KeysChangeWithEverythingThatChangesTheAnswer) {
  const Command run = *parse_command("run --layerwise"), lint = *parse_command("lint");
  const std::string d1(64, 'a'), d2(64, 'b');
  const std::string k = job_key(d1, run, {}, 600, 0);
  EXPECT_EQ(k.size(), 64u);
  EXPECT_EQ(k, job_key(d1, run, {}, 600, 0));
  EXPECT_NE(k, job_key(d2, run, {}, 600, 0));
  EXPECT_NE(k, job_key(d1, lint, {}, 600, 0));
  EXPECT_NE(k, job_key(d1, *parse_command("run"), {}, 600, 0));
  EXPECT_NE(k, job_key(d1, run, {"--input-shapes", "x:1"}, 600, 0));
  EXPECT_NE(k, job_key(d1, run, {}, 60, 0));
  EXPECT_NE(k, job_key(d1, run, {}, 600, 1 << 30));
  // lint takes no inputs: a list file's --input-shapes do not reach it, nor its key.
  EXPECT_EQ(job_key(d1, lint, {}, 600, 0), job_key(d1, lint, {"--input-shapes", "x:1"}, 600, 0));
  // Word boundaries count: ("ab", "c") is not ("a", "bc").
  EXPECT_NE(job_key(d1, *parse_command("run ab c"), {}, 0, 0),
            job_key(d1, *parse_command("run a bc"), {}, 0, 0));
}

TEST(BatchJobs, Sha256OfKnownText) {
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(BatchJobs, FindsModelsInFoldersAndLists) {
  auto tmp = TempDir::create("batch-find");
  ASSERT_TRUE(tmp.has_value());
  const fs::path d = tmp->path();
  fs::create_directories(d / "zoo" / "sub");
  fs::create_directories(d / "zoo" / "report");
  for (const char* f : {"zoo/b.onnx", "zoo/sub/a.onnx", "zoo/notes.txt", "zoo/report/x.onnx"})
    std::ofstream(d / f) << "x";
  std::ofstream(d / "list.txt") << "# models\nzoo/b.onnx --input-shapes 'x:1x3'  # shapes\n\n"
                                   "missing.onnx\n";
  auto found =
      find_models({(d / "zoo").string(), (d / "list.txt").string(), (d / "gone.onnx").string()},
                  d / "zoo" / "report");
  ASSERT_TRUE(found.has_value()) << found.status().to_string();
  ASSERT_EQ(found->size(), 5u);
  EXPECT_EQ((*found)[0].path, (d / "zoo" / "b.onnx").string());
  EXPECT_EQ((*found)[1].path, (d / "zoo" / "sub" / "a.onnx").string());
  EXPECT_EQ((*found)[2].path, (d / "zoo" / "b.onnx").string());
  EXPECT_EQ((*found)[2].args, (std::vector<std::string>{"--input-shapes", "x:1x3"}));
  EXPECT_EQ((*found)[2].problem, "");
  EXPECT_EQ((*found)[3].problem, "no such file or folder");
  EXPECT_EQ((*found)[4].problem, "no such file or folder");
  std::ofstream(d / "weights.bin") << std::string("\0\1\2", 3);
  auto binary = find_models({(d / "weights.bin").string()}, {});
  ASSERT_FALSE(binary.has_value());
  EXPECT_NE(std::string(binary.status().message()).find("neither an .onnx model nor a list"),
            std::string::npos);
}

TEST(BatchRecord, StatusFromTheOutcome) {
  auto tmp = TempDir::create("batch-record");
  ASSERT_TRUE(tmp.has_value());
  const fs::path d = tmp->path();
  std::ofstream(d / "stdout.json") << R"({"verdict": "disagree", "verdict_line": "they differ",
      "first_divergent_node": {"node": "conv1", "op_type": "Conv", "backend": "onnxruntime"},
      "backends": [{"name": "opencv", "status": "error", "failed_stage": "load", "error": "no"}]})";
  std::ofstream(d / "stderr.txt") << "onnxdbg: error: the last words\n";
  const std::string out = read_file_head(d / "stdout.json", kMaxJobOutput);
  auto rec = job_record({0, 1, 0, false, 2.5, ""}, out, d, "run", 600, 1);
  EXPECT_EQ(rec["status"], "fail");
  EXPECT_EQ(rec["line"], "first divergent node conv1 on onnxruntime");
  EXPECT_EQ(rec["details"]["first_divergent_node"]["op_type"], "Conv");
  EXPECT_EQ(rec["details"]["backend_errors"][0]["stage"], "load");
  EXPECT_TRUE(is_final(rec));
  auto killed = job_record({0, -1, 11, false, 1, ""}, out, d, "run", 600, 2);
  EXPECT_EQ(killed["status"], "crashed");
  EXPECT_EQ(killed["line"], "onnxdbg was killed by signal 11 (SIGSEGV), 2 times");
  EXPECT_FALSE(is_final(killed));
  auto late = job_record({0, -1, 0, true, 30, ""}, out, d, "lint", 30, 1);
  EXPECT_EQ(late["status"], "timeout");
  EXPECT_FALSE(is_final(late));
  fs::remove(d / "stdout.json");
  auto error = job_record({0, 2, 0, false, 0.1, ""}, "", d, "lint", 30, 1);
  EXPECT_EQ(error["status"], "error");
  EXPECT_EQ(error["line"], "the last words");
  auto fleet = fleet_json(nlohmann::json::array({{{"model", "a.onnx"},
                                                  {"command", "run"},
                                                  {"status", "fail"},
                                                  {"seconds", 1.0},
                                                  {"details", rec["details"]}},
                                                 {{"model", "b.onnx"},
                                                  {"command", "run"},
                                                  {"status", "crashed"},
                                                  {"seconds", 3.0},
                                                  {"line", "killed"},
                                                  {"details", nullptr}}}));
  EXPECT_EQ(fleet["op_types"][0]["op_type"], "Conv");
  EXPECT_EQ(fleet["backend_errors"][0]["backend"], "opencv");
  EXPECT_EQ(fleet["crashes"][0]["model"], "b.onnx");
  EXPECT_EQ(fleet["slowest"][0]["model"], "b.onnx");
  const std::string html = index_html({{"jobs", {{{"model", "<x>.onnx"}, {"command", "run"}}}}});
  EXPECT_NE(html.find("&lt;x&gt;.onnx"), std::string::npos);
  EXPECT_EQ(html.find("<x>.onnx"), std::string::npos);
}

}  // namespace
}  // namespace onnxdbg::batch
