// Every command lint suggests as a fix works (issue 19, item 7): for each rule that names one
// (use_before_definition: `surgeon sanitize --toposort`; op_not_in_opset: `surgeon convert-opset`
// for a removed op that a later opset defines again), the model is written to a file, linted, the
// quoted command is run through the real binary, and the result lints without errors. Where no
// command can work (other errors, a cycle, an op used in a newer opset's form) none is named and
// the fix is said in words; the reported case (opset 9 declared, opset-11 forms) among them.
#include <gtest/gtest.h>

#include <algorithm>

#include "lint/fixes.h"
#include "lint/lint.h"
#include "lint/lint_test_util.h"
#include "lint/rule.h"
#include "model/model.h"
#include "test_util.h"

namespace onnxdbg::lint {
namespace {

using lint_testing::errors;
using lint_testing::of_rule;

namespace fs = std::filesystem;
using onnxdbg::testing::make_temp_dir;
using onnxdbg::testing::parse_text_model;
using onnxdbg::testing::run_cli;

std::vector<Finding> lint_loaded(const LoadedModel& lm) {
  auto r = lint_model(lm);
  EXPECT_TRUE(r.has_value()) << (r ? "" : r.status().to_string());
  return r ? *r : std::vector<Finding>{};
}

// Lints `m` as a model read from `path` (the file need not exist: trials work on the copy).
std::vector<Finding> lint_as(const onnx::ModelProto& m, const fs::path& path) {
  LoadedModel lm;
  lm.proto = m;
  lm.path = path;
  lm.base_dir = path.parent_path();
  return lint_loaded(lm);
}

std::vector<Finding> lint_in_memory(const onnx::ModelProto& m) {
  LoadedModel lm;
  lm.proto = m;
  return lint_loaded(lm);
}

std::string rules_and_messages(const std::vector<Finding>& fs) {
  std::string s;
  for (const auto& f : fs) s += f.rule + ": " + f.message + "\n";
  return s;
}

// The text between the first pair of backquotes; "" when there is none.
std::string quoted_command(const std::string& message) {
  const size_t a = message.find('`');
  if (a == std::string::npos) return "";
  const size_t b = message.find('`', a + 1);
  return b == std::string::npos ? "" : message.substr(a + 1, b - a - 1);
}

// The words of a shell command line with single quotes and backslash escapes (what
// surgeon_command writes).
std::vector<std::string> shell_words(const std::string& cmd) {
  std::vector<std::string> out;
  std::string cur;
  bool in_word = false, in_quote = false, escaped = false;
  for (char c : cmd) {
    if (escaped) {
      cur += c;
      escaped = false;
    } else if (in_quote) {
      if (c == '\'')
        in_quote = false;
      else
        cur += c;
    } else if (c == '\'' || c == '\\') {
      (c == '\'' ? in_quote : escaped) = true;
      in_word = true;
    } else if (c == ' ') {
      if (in_word) out.push_back(cur);
      cur.clear();
      in_word = false;
    } else {
      cur += c;
      in_word = true;
    }
  }
  if (in_word) out.push_back(cur);
  return out;
}

// Writes `m` to `dir`/`file`, lints it as the CLI does (load_model, the path relative to `dir`
// as a user in that folder types it), runs the command the finding of `rule` quotes through the
// real binary in `dir`, and checks that it exits 0 and its output lints without that finding or
// any error.
void expect_suggested_command_works(const onnx::ModelProto& m, const fs::path& dir,
                                    const std::string& file, const std::string& rule) {
  ASSERT_TRUE(save_model(m, dir / file).is_ok());
  const fs::path cwd = fs::current_path();
  fs::current_path(dir);
  auto loaded = load_model(file);
  fs::current_path(cwd);
  ASSERT_TRUE(loaded.has_value()) << loaded.status().to_string();
  loaded->base_dir = dir;
  const auto fs = lint_loaded(*loaded);
  const auto found = of_rule(fs, rule);
  ASSERT_FALSE(found.empty()) << rules_and_messages(fs);
  const std::string cmd = quoted_command(found[0].message);
  ASSERT_EQ(cmd.rfind("onnxdbg surgeon ", 0), 0u) << found[0].message;
  const auto r = run_cli(cmd.substr(std::string("onnxdbg ").size()), dir, true);
  ASSERT_EQ(r.exit_code, 0) << cmd << "\n" << r.out;
  const auto words = shell_words(cmd);
  auto o = std::find(words.begin(), words.end(), "-o");
  ASSERT_NE(o, words.end());
  ASSERT_NE(o + 1, words.end());
  auto out = load_model(dir / *(o + 1));
  ASSERT_TRUE(out.has_value()) << out.status().to_string();
  const auto after = lint_loaded(*out);
  EXPECT_TRUE(of_rule(after, rule).empty()) << rules_and_messages(after);
  EXPECT_EQ(errors(after), 0) << rules_and_messages(after);
}

const char* kOutOfOrder = R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[2] x) => (float[2] y) {
  y = Neg(a)
  a = Relu(x)
})";

TEST(LintFix, ToposortCommandIsCompleteAndWorks) {
  const auto m = parse_text_model(kOutOfOrder);
  auto u = of_rule(lint_as(m, "models/net.onnx"), "use_before_definition");
  ASSERT_EQ(u.size(), 1u);
  EXPECT_EQ(quoted_command(u[0].message),
            "onnxdbg surgeon sanitize models/net.onnx --toposort -o models/net.sorted.onnx");
  const auto dir = make_temp_dir("onnxdbg_lint_fix_");
  expect_suggested_command_works(m, dir.path(), "net.onnx", "use_before_definition");
}

TEST(LintFix, ToposortCommandCoversSubgraphs) {
  const auto m = parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (bool c, float[2] x) => (float[2] y) {
  y = If(c) <then_branch = t () => (float[2] ty) { ty = Neg(ta)  ta = Relu(x) },
             else_branch = e () => (float[2] ey) { ey = Identity(x) }>
})");
  const auto dir = make_temp_dir("onnxdbg_lint_fix_");
  expect_suggested_command_works(m, dir.path(), "if.onnx", "use_before_definition");
}

TEST(LintFix, PathsAreShellQuoted) {
  const auto m = parse_text_model(kOutOfOrder);
  auto u = of_rule(lint_as(m, "my dir/it's.onnx"), "use_before_definition");
  ASSERT_EQ(u.size(), 1u);
  EXPECT_EQ(quoted_command(u[0].message),
            "onnxdbg surgeon sanitize 'my dir/it'\\''s.onnx' --toposort -o "
            "'my dir/it'\\''s.sorted.onnx'");
  u = of_rule(lint_as(m, "-m.onnx"), "use_before_definition");
  ASSERT_EQ(u.size(), 1u);
  EXPECT_EQ(quoted_command(u[0].message),
            "onnxdbg surgeon sanitize ./-m.onnx --toposort -o ./-m.sorted.onnx");
  const auto dir = make_temp_dir("onnxdbg_lint_fix_");
  fs::create_directories(dir.path() / "my dir");
  expect_suggested_command_works(m, dir.path(), "my dir/it's.onnx", "use_before_definition");
}

TEST(LintFix, InMemoryModelGetsTheFixInWords) {
  auto u = of_rule(lint_in_memory(parse_text_model(kOutOfOrder)), "use_before_definition");
  ASSERT_EQ(u.size(), 1u);
  EXPECT_EQ(u[0].message.find('`'), std::string::npos) << u[0].message;
  EXPECT_NE(u[0].message.find("onnxdbg surgeon sanitize --toposort writes them sorted"),
            std::string::npos)
      << u[0].message;
}

TEST(LintFix, NoToposortCommandWhileOtherErrorsRemain) {
  const auto m = parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[2] x) => (float[2] y) {
  y = Neg(a)
  a = Relu<bogus = 1>(x)
})");
  auto u = of_rule(lint_as(m, "m.onnx"), "use_before_definition");
  ASSERT_EQ(u.size(), 1u);
  EXPECT_EQ(u[0].message.find('`'), std::string::npos) << u[0].message;
  EXPECT_NE(u[0].message.find("fix the model's other lint errors first"), std::string::npos)
      << u[0].message;
  // What the command would do: sort, then refuse the result for the unknown attribute.
  const auto dir = make_temp_dir("onnxdbg_lint_fix_");
  ASSERT_TRUE(save_model(m, dir.path() / "m.onnx").is_ok());
  const auto r = run_cli("surgeon sanitize m.onnx --toposort -o m.sorted.onnx", dir.path(), true);
  EXPECT_EQ(r.exit_code, 2) << r.out;
}

TEST(LintFix, NoToposortCommandForACycle) {
  auto u = of_rule(lint_as(parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 13]>
g (float[2] x) => (float[2] b) {
  a = Add(x, b)
  b = Relu(a)
})"),
                           "m.onnx"),
                   "use_before_definition");
  ASSERT_EQ(u.size(), 1u);
  EXPECT_EQ(u[0].message.find('`'), std::string::npos) << u[0].message;
  EXPECT_NE(u[0].message.find("they cannot be sorted: the nodes form a cycle"), std::string::npos)
      << u[0].message;
}

// The reported case (issue 19): opset 9 declared, Clip with min/max inputs, Resize and Pad in
// their opset-11 forms. Lint used to say `convert-opset --opset 10`, which fails.
const char* kOpset11Forms = R"(
<ir_version: 6, opset_import: ["" : 9]>
g (float[1,1,2,2] x) => (float[1,1,6,6] y)
<float lo = {0.0}, float hi = {6.0}, float[0] roi = {},
 float[4] scales = {1.0, 1.0, 2.0, 2.0}, int64[8] pads = {0, 0, 1, 1, 0, 0, 1, 1}> {
  c = Clip(x, lo, hi)
  r = Resize<mode = "nearest">(c, roi, scales)
  y = Pad(r, pads)
})";

TEST(LintFix, OpInANewerFormGetsAWorkingSetOpsetCommand) {
  auto m = parse_text_model(kOpset11Forms);
  const auto fs = lint_as(m, "m.onnx");
  auto o = of_rule(fs, "op_not_in_opset");
  ASSERT_EQ(o.size(), 1u) << rules_and_messages(fs);
  EXPECT_EQ(o[0].op_type, "Resize");
  EXPECT_NE(o[0].message.find("this node has the form of its opset-11 version"), std::string::npos)
      << o[0].message;
  EXPECT_NE(o[0].message.find("#0 Clip, #2 Pad also have forms newer than opset 9"),
            std::string::npos)
      << o[0].message;
  EXPECT_EQ(quoted_command(o[0].message),
            "onnxdbg surgeon set-opset m.onnx --opset 11 -o m.opset11.onnx");
  // The old advice fails; the advice given works.
  onnx::ModelProto converted = m;
  EXPECT_FALSE(convert_opset(converted, 10).is_ok());
  const auto dir = make_temp_dir("onnxdbg_lint_fix_");
  expect_suggested_command_works(m, dir.path(), "m.onnx", "op_not_in_opset");
}

TEST(LintFix, SetOpsetDeclaresTheOpsetAndChangesNoNode) {
  auto m = parse_text_model(kOpset11Forms);
  const auto before = m.graph().SerializeAsString();
  ASSERT_TRUE(set_opset(m, 11).is_ok());
  EXPECT_EQ(m.opset_import(0).version(), 11);
  EXPECT_EQ(m.graph().SerializeAsString(), before);
  EXPECT_EQ(set_opset(m, 0).code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(set_opset(m, 1000).code(), ErrorCode::kInvalidArgument);
  m.clear_opset_import();  // no default-domain import: one is added
  ASSERT_TRUE(set_opset(m, 13).is_ok());
  ASSERT_EQ(m.opset_import_size(), 1);
  EXPECT_EQ(m.opset_import(0).domain(), "");
  EXPECT_EQ(m.opset_import(0).version(), 13);
}

TEST(LintFix, ResizeInItsOpset10FormNamesOpset10) {
  auto m = parse_text_model(R"(
<ir_version: 6, opset_import: ["" : 9]>
g (float[1,1,2,2] x) => (float[1,1,4,4] y) <float[4] scales = {1.0, 1.0, 2.0, 2.0}> {
  y = Resize<mode = "nearest">(x, scales)
})");
  auto o = of_rule(lint_as(m, "m.onnx"), "op_not_in_opset");
  ASSERT_EQ(o.size(), 1u);
  EXPECT_EQ(quoted_command(o[0].message),
            "onnxdbg surgeon set-opset m.onnx --opset 10 -o m.opset10.onnx");
  EXPECT_EQ(o[0].message.find("also ha"), std::string::npos) << o[0].message;
  m.mutable_opset_import(0)->set_version(10);
  EXPECT_EQ(errors(lint_as(m, "m.onnx")), 0);
}

TEST(LintFix, RemovedOpDefinedAgainLaterGetsAWorkingConvertCommand) {
  const auto m = parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 18]>
g (float[1,4,2,2] x) => (float[1,4,2,2] y) <float[2] s = {1.0, 1.0}, float[2] b = {0.0, 0.0}> {
  y = GroupNormalization<num_groups = 2>(x, s, b)
})");
  auto o = of_rule(lint_as(m, "gn.onnx"), "op_not_in_opset");
  ASSERT_EQ(o.size(), 1u);
  EXPECT_EQ(quoted_command(o[0].message),
            "onnxdbg surgeon convert-opset gn.onnx --opset 21 -o gn.opset21.onnx");
  const auto dir = make_temp_dir("onnxdbg_lint_fix_");
  expect_suggested_command_works(m, dir.path(), "gn.onnx", "op_not_in_opset");
}

TEST(LintFix, TwoProblemsThatNeedTwoEditsGetNoCommand) {
  // Sorting leaves the removed op; converting leaves the order: neither command alone writes.
  const auto fs = lint_as(parse_text_model(R"(
<ir_version: 8, opset_import: ["" : 18]>
g (float[1,4,2,2] x) => (float[1,4,2,2] y) <float[2] s = {1.0, 1.0}, float[2] b = {0.0, 0.0}> {
  y = Neg(n)
  n = GroupNormalization<num_groups = 2>(x, s, b)
})"),
                          "m.onnx");
  const auto u = of_rule(fs, "use_before_definition");
  const auto o = of_rule(fs, "op_not_in_opset");
  ASSERT_EQ(u.size(), 1u) << rules_and_messages(fs);
  ASSERT_EQ(o.size(), 1u) << rules_and_messages(fs);
  EXPECT_EQ(u[0].message.find('`'), std::string::npos) << u[0].message;
  EXPECT_EQ(o[0].message.find('`'), std::string::npos) << o[0].message;
  EXPECT_NE(o[0].message.find("opset 21 defines GroupNormalization again"), std::string::npos)
      << o[0].message;
}

TEST(LintFix, RemovedOpWithoutLaterVersionNamesItsReplacementAndTheOpsetThatHadIt) {
  for (const auto& [text, replacement] :
       std::vector<std::pair<const char*, const char*>>{{R"(
<ir_version: 6, opset_import: ["" : 10]>
g (float[1,1,2,2] x) => (float[1,1,4,4] y) <float[4] scales = {1.0, 1.0, 2.0, 2.0}> {
  y = Upsample<mode = "nearest">(x, scales)
})",
                                                         "Resize"},
                                                        {R"(
<ir_version: 6, opset_import: ["" : 11]>
g (float[4] x) => (float[4] y) <int64[1] i = {1}, float[1] u = {5.0}> {
  y = Scatter(x, i, u)
})",
                                                         "ScatterElements"}}) {
    const auto m = parse_text_model(text);
    auto o = of_rule(lint_as(m, "m.onnx"), "op_not_in_opset");
    ASSERT_EQ(o.size(), 1u);
    EXPECT_NE(o[0].message.find(std::string("replace it with ") + replacement), std::string::npos)
        << o[0].message;
    // Or declare the last opset that had it: a command that works.
    const std::string older = std::to_string(m.opset_import(0).version() - 1);
    EXPECT_EQ(quoted_command(o[0].message), "onnxdbg surgeon set-opset m.onnx --opset " + older +
                                                " -o m.opset" + older + ".onnx");
    const auto dir = make_temp_dir("onnxdbg_lint_fix_");
    expect_suggested_command_works(m, dir.path(), "m.onnx", "op_not_in_opset");
  }
}

TEST(LintFix, FormOpsetFindsTheVersionANodeFits) {
  const auto m = parse_text_model(kOpset11Forms);
  const auto& clip = m.graph().node(0);
  EXPECT_EQ(form_opset(clip, "", 9), 11);  // Clip-6 takes one input; Clip-11 takes min and max
  const auto* clip6 = onnx::OpSchemaRegistry::Schema("Clip", 9, "");
  ASSERT_NE(clip6, nullptr);
  EXPECT_FALSE(fits_schema(clip, *clip6));
  EXPECT_EQ(form_opset(m.graph().node(1), "", 9), 11);   // Resize with roi
  EXPECT_EQ(form_opset(m.graph().node(2), "", 9), 11);   // Pad with pads as an input
  EXPECT_EQ(form_opset(m.graph().node(2), "", 11), 13);  // the next version it also fits
}

}  // namespace
}  // namespace onnxdbg::lint
