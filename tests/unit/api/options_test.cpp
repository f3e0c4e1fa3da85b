// The option schema (include/onnxdbg/options.def): rows complete and unique, defaults written as
// the CLI writes them, and the API's option structs starting from the schema's defaults.
#include "onnxdbg/options.h"

#include <gtest/gtest.h>

#include <set>

#include "onnxdbg/reduce.h"
#include "onnxdbg/run.h"

namespace onnxdbg {
namespace {

TEST(OptionSchema, RowsAreCompleteAndUnique) {
  // `onnxdbg batch` takes only the batch group, whose --timeout, --max-memory and --jobs are per
  // job: its flags are unique among its own rows, the other groups' among theirs.
  std::set<std::string_view> ids, flags, batch_flags;
  for (const auto& r : option_schema()) {
    EXPECT_TRUE(ids.insert(r.id).second) << r.id;
    EXPECT_TRUE((r.group == "batch" ? batch_flags : flags).insert(r.cli).second) << r.cli;
    EXPECT_EQ(r.cli.substr(0, 2), "--") << r.id;
    EXPECT_FALSE(r.help.empty()) << r.id;
    EXPECT_FALSE(r.group.empty()) << r.id;
    EXPECT_EQ(&option_spec(r.id), &r) << r.id;
  }
  EXPECT_GE(ids.size(), 30u);
}

TEST(OptionSchema, DefaultsAreWrittenAsTheCliWritesThem) {
  EXPECT_EQ(option_spec("atol").default_text, "1e-05");
  EXPECT_EQ(option_spec("seed").default_text, "1");
  EXPECT_EQ(option_spec("validate").default_text, "false");
  EXPECT_EQ(option_spec("backends").default_text, "reference,onnxruntime");
  EXPECT_EQ(option_spec("layerwise_memory").default_text, "2GiB");
  EXPECT_EQ(option_spec("layerwise_memory").unit, "bytes");
  EXPECT_EQ(option_spec("load_inputs").python, "inputs");
}

TEST(OptionSchema, ApiStructsStartFromTheSchemasDefaults) {
  const api::RunOptions run;
  EXPECT_EQ(run.comparison.tolerance.default_tol.atol, option_defaults::atol);
  EXPECT_EQ(run.comparison.tolerance.default_tol.rtol, option_defaults::rtol);
  EXPECT_EQ(run.inputs.generate.seed, option_defaults::seed);
  EXPECT_EQ(run.layerwise.memory_budget, option_defaults::layerwise_memory);
  const api::ReduceOptions reduce;
  EXPECT_EQ(reduce.mode, option_defaults::mode);
  EXPECT_EQ(reduce.jobs, option_defaults::jobs);
  EXPECT_EQ(reduce.iterations, option_defaults::iterations);
  EXPECT_EQ(reduce.builtin.tolerance.default_tol.atol, option_defaults::atol);
}

}  // namespace
}  // namespace onnxdbg
