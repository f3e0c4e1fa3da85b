// Execution-provider names, the requested-versus-used check (check_providers) and the --backends
// list syntax where a comma continues a provider list. Pure functions: no ONNX Runtime needed
// here; onnxruntime_test.cpp checks the same through a real session.
#include "backends/providers.h"

#include <gtest/gtest.h>

#include "backends/backend.h"

namespace onnxdbg {
namespace {

const std::vector<std::string> kCpuOnly = {"CPUExecutionProvider"};

std::vector<NodePlacement> nodes(const std::vector<std::string>& providers) {
  std::vector<NodePlacement> out;
  for (size_t i = 0; i < providers.size(); ++i)
    out.push_back({"n" + std::to_string(i), "Relu", providers[i]});
  return out;
}

TEST(Providers, FullAndShortNames) {
  EXPECT_EQ(*provider_full_name("cpu"), "CPUExecutionProvider");
  EXPECT_EQ(*provider_full_name("CUDA"), "CUDAExecutionProvider");
  EXPECT_EQ(*provider_full_name("trt"), "TensorrtExecutionProvider");
  EXPECT_EQ(*provider_full_name("tensorrtexecutionprovider"), "TensorrtExecutionProvider");
  EXPECT_EQ(*provider_full_name("FancyNewExecutionProvider"), "FancyNewExecutionProvider");
  EXPECT_EQ(provider_short_name("OpenVINOExecutionProvider"), "openvino");
  EXPECT_EQ(provider_short_name("FancyNewExecutionProvider"), "fancynew");
  auto typo = provider_full_name("cdua");
  ASSERT_FALSE(typo.has_value());
  EXPECT_EQ(typo.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(typo.status().message().find("known: cpu, cuda, tensorrt"), std::string::npos);
}

TEST(Providers, ListTakesPlusAndCommaAndDropsDuplicates) {
  const std::vector<std::string> want = {"CUDAExecutionProvider", "CPUExecutionProvider"};
  EXPECT_EQ(*parse_provider_list("cuda+cpu"), want);
  EXPECT_EQ(*parse_provider_list("cuda,cpu"), want);
  EXPECT_EQ(*parse_provider_list("cuda+CUDAExecutionProvider, cpu"), want);
  EXPECT_FALSE(parse_provider_list("").has_value());
  EXPECT_FALSE(parse_provider_list("+,").has_value());
  auto bad = parse_provider_list("cuda+gpu");
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.status().message().find("'gpu'"), std::string::npos);
}

TEST(Providers, CpuAsRequestedHasNoWarning) {
  const ProviderReport r = check_providers(kCpuOnly, kCpuOnly, {},
                                           nodes({"CPUExecutionProvider", "CPUExecutionProvider"}));
  EXPECT_TRUE(r.warnings.empty());
  EXPECT_EQ(r.used, kCpuOnly);
  EXPECT_EQ(r.node_counts, (std::map<std::string, int64_t>{{"CPUExecutionProvider", 2}}));
}

TEST(Providers, MissingProviderWarnsAndSaysWhereTheNodesWent) {
  const ProviderReport r = check_providers(
      {"CUDAExecutionProvider", "CPUExecutionProvider"}, kCpuOnly, {},
      nodes({"CPUExecutionProvider", "CPUExecutionProvider", "CPUExecutionProvider"}));
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_EQ(r.warnings[0],
            "execution provider 'cuda' (CUDAExecutionProvider) was requested but this ONNX "
            "Runtime build does not have it (it has: cpu); all 3 nodes ran on "
            "CPUExecutionProvider");
}

TEST(Providers, RefusedProviderWarnsWithOrtsMessage) {
  const ProviderReport r = check_providers(
      {"CUDAExecutionProvider"}, {"CUDAExecutionProvider", "CPUExecutionProvider"},
      {{"CUDAExecutionProvider", "libcudart.so.12: cannot open shared object file"}},
      nodes({"CPUExecutionProvider"}));
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_NE(r.warnings[0].find("could not add it: libcudart.so.12"), std::string::npos);
  EXPECT_NE(r.warnings[0].find("the only node ran on CPUExecutionProvider"), std::string::npos);
}

TEST(Providers, SilentReplacementAndPartialFallbackWarn) {
  const std::vector<std::string> both = {"CUDAExecutionProvider", "CPUExecutionProvider"};
  // Asked for cuda first, cuda is there, yet every node went to the CPU.
  ProviderReport r = check_providers(both, both, {}, nodes({"CPUExecutionProvider"}));
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_NE(r.warnings[0].find("requested first but ONNX Runtime assigned it none of the 1 node"),
            std::string::npos)
      << r.warnings[0];
  // Asked for cuda only: the nodes ORT put on the CPU were not asked for.
  r = check_providers({"CUDAExecutionProvider"}, both, {},
                      nodes({"CUDAExecutionProvider", "CPUExecutionProvider"}));
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_EQ(r.warnings[0],
            "1 of the 2 nodes ran on CPUExecutionProvider, which was not requested (requested: "
            "cuda)");
  EXPECT_EQ(r.used, both);
  // cuda+cpu with a CPU fallback for some nodes is what was asked for.
  r = check_providers(both, both, {}, nodes({"CUDAExecutionProvider", "CPUExecutionProvider"}));
  EXPECT_TRUE(r.warnings.empty());
}

TEST(Providers, NoPlacementMeansNoNodeWarnings) {
  const ProviderReport r = check_providers(kCpuOnly, kCpuOnly, {}, {});
  EXPECT_TRUE(r.warnings.empty());
  EXPECT_TRUE(r.used.empty());
}

TEST(BackendList, CommaContinuesAProviderList) {
  auto specs = parse_backend_list("reference,onnxruntime:providers=cuda,cpu");
  ASSERT_TRUE(specs.has_value()) << specs.status().to_string();
  ASSERT_EQ(specs->size(), 2u);
  EXPECT_EQ((*specs)[0].name, "reference");
  EXPECT_EQ((*specs)[1].option("providers"), "cuda,cpu");

  specs = parse_backend_list("onnxruntime:opt=basic:providers=openvino,cpu,opencv");
  ASSERT_TRUE(specs.has_value()) << specs.status().to_string();
  ASSERT_EQ(specs->size(), 2u);
  EXPECT_EQ((*specs)[0].option("providers"), "openvino,cpu");
  EXPECT_EQ((*specs)[0].option("opt"), "basic");
  EXPECT_EQ((*specs)[1].name, "opencv");

  specs = parse_backend_list("onnxruntime:providers=cuda+cpu,reference");
  ASSERT_TRUE(specs.has_value());
  EXPECT_EQ((*specs)[0].option("providers"), "cuda+cpu");
}

TEST(BackendList, BadItemsAreClearErrors) {
  auto typo = parse_backend_list("reference,onnxruntime:providers=cuda,cdua");
  ASSERT_FALSE(typo.has_value());
  EXPECT_NE(typo.status().message().find("unknown execution provider 'cdua'"), std::string::npos)
      << typo.status().message();
  // Only provider lists continue: after threads=1, 'bogus' is an unknown backend.
  auto bogus = parse_backend_list("onnxruntime:threads=1,bogus");
  ASSERT_FALSE(bogus.has_value());
  EXPECT_NE(bogus.status().message().find("unknown backend 'bogus'"), std::string::npos);
  EXPECT_FALSE(parse_backend_list(",").has_value());
}

}  // namespace
}  // namespace onnxdbg
