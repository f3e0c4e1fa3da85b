// String kernels: StringNormalizer (stopwords with and without case sensitivity, case changes,
// the empty result, [1, C] input, ASCII-only folding), TfIdfVectorizer (TF, IDF, TFIDF, skips,
// min_gram_length, string pools, batches), StringConcat, StringSplit and RegexFullMatch.
#include "op_test_util.h"

namespace onnxdbg::testing {
namespace {

using S = std::vector<std::string>;

std::string normalizer(const std::string& attrs, const std::string& in = "string[3]",
                       const std::string& out = "string[N]") {
  return R"(<ir_version: 8, opset_import: ["" : 10]>
g ()" + in +
         R"( x) => ()" + out + R"( z) { z = StringNormalizer<)" + attrs + R"(>(x) })";
}

TEST(StringNormalizer, StopwordsAndCase) {
  const Tensor x = tensor<std::string>({3}, S{"Monday", "tuesday", "MONDAY"});
  auto z = run_op(normalizer(R"(stopwords=["monday"], case_change_action="UPPER")"), {{"x", x}});
  ASSERT_EQ(shape_to_string(z.shape()), "1");
  EXPECT_EQ(z.strings(), S{"TUESDAY"});
  auto sens =
      run_op(normalizer(R"(stopwords=["monday"], is_case_sensitive=1, case_change_action="LOWER")"),
             {{"x", x}});
  EXPECT_EQ(sens.strings(), (S{"monday", "tuesday", "monday"}));
  auto all = run_op(normalizer(R"(stopwords=["monday", "TUESDAY"])"), {{"x", x}});
  ASSERT_EQ(shape_to_string(all.shape()), "1");
  EXPECT_EQ(all.strings(), S{""});
  auto two = run_op(normalizer(R"(stopwords=["x"])", "string[1,2]", "string[1,N]"),
                    {{"x", tensor<std::string>({1, 2}, S{"a", "x"})}});
  ASSERT_EQ(shape_to_string(two.shape()), "1x1");
  // Only ASCII letters change case; UTF-8 sequences are kept as they are.
  auto utf = run_op(normalizer(R"(case_change_action="LOWER")", "string[1]"),
                    {{"x", tensor<std::string>({1}, S{"\xC3\x89T\xC3\x89"})}});
  EXPECT_EQ(utf.strings(), S{"\xC3\x89t\xC3\x89"});
  auto err = run_op_error(normalizer(R"(case_change_action="TITLE")"), {{"x", x}});
  EXPECT_NE(err.find("unknown case_change_action 'TITLE'"), std::string::npos) << err;
}

std::string tfidf(const std::string& attrs, const std::string& in = "int32[5]",
                  const std::string& out = "float[3]") {
  return R"(<ir_version: 8, opset_import: ["" : 9]>
g ()" + in +
         R"( x) => ()" + out + R"( z) { z = TfIdfVectorizer<)" + attrs + R"(>(x) })";
}

TEST(TfIdfVectorizer, Modes) {
  // Pool: unigrams 1 and 3, bigram (1, 2); X = 1 2 1 2 3.
  const std::string pool =
      R"(pool_int64s=[1, 3, 1, 2], ngram_counts=[0, 2], ngram_indexes=[0, 1, 2], min_gram_length=1, max_gram_length=2, max_skip_count=0)";
  const Tensor x = tensor<int32_t>({5}, {1, 2, 1, 2, 3});
  expect_tensor_near(run_op(tfidf(pool + R"(, mode="TF")"), {{"x", x}}), {3}, {2, 1, 2});
  expect_tensor_near(run_op(tfidf(pool + R"(, mode="IDF", weights=[0.5, 1.0, 2.0])"), {{"x", x}}),
                     {3}, {0.5, 1, 2});
  expect_tensor_near(run_op(tfidf(pool + R"(, mode="TFIDF", weights=[0.5, 1.0, 2.0])"), {{"x", x}}),
                     {3}, {1, 1, 4});
}

TEST(TfIdfVectorizer, SkipsAndMinimumLength) {
  // Bigrams with up to one skipped token: X = 1 5 2 1 2 holds (1, 2) with skip 1 at position 0
  // and with skip 0 at position 3; unigrams are below min_gram_length.
  const Tensor x = tensor<int32_t>({5}, {1, 5, 2, 1, 2});
  auto z = run_op(
      tfidf(
          R"(pool_int64s=[1, 3, 1, 2], ngram_counts=[0, 2], ngram_indexes=[0, 1, 2], min_gram_length=2, max_gram_length=2, max_skip_count=1, mode="TF")"),
      {{"x", x}});
  expect_tensor_near(z, {3}, {0, 0, 2});
}

TEST(TfIdfVectorizer, StringBatch) {
  auto z = run_op(
      tfidf(
          R"(pool_strings=["b"], ngram_counts=[0], ngram_indexes=[0], min_gram_length=1, max_gram_length=1, max_skip_count=0, mode="TF")",
          "string[2,2]", "float[2,1]"),
      {{"x", tensor<std::string>({2, 2}, S{"a", "b", "b", "b"})}});
  expect_tensor_near(z, {2, 1}, {1, 2});
  auto err = run_op_error(
      tfidf(
          R"(pool_int64s=[1, 2, 3], ngram_counts=[0, 2], ngram_indexes=[0, 1], min_gram_length=1, max_gram_length=2, max_skip_count=0, mode="TF")"),
      {{"x", tensor<int32_t>({5}, {1, 2, 3, 4, 5})}});
  EXPECT_NE(err.find("ngram_counts"), std::string::npos) << err;
}

TEST(StringConcat, Broadcasts) {
  auto z = run_op(R"(<ir_version: 8, opset_import: ["" : 20]>
    g (string[2] a, string[1] b) => (string[2] z) { z = StringConcat(a, b) })",
                  {{"a", tensor<std::string>({2}, S{"ab", "\xC3\xA9"})},
                   {"b", tensor<std::string>({1}, S{"!"})}});
  EXPECT_EQ(z.strings(), (S{"ab!", "\xC3\xA9!"}));
}

TEST(StringSplit, DelimiterWhitespaceAndMaxsplit) {
  auto split = [](const std::string& attrs, S x) {
    const std::string m = R"(<ir_version: 8, opset_import: ["" : 20]>
    g (string[2] x) => (string y, int64[2] n) { y, n = StringSplit )" +
                          attrs + R"( (x) })";
    auto model = parse_text_model(m);
    return run_reference(model, {{"x", tensor<std::string>({2}, std::move(x))}});
  };
  auto d = split(R"(<delimiter = ",">)", {"a,b,,c", ""});
  ASSERT_EQ(shape_to_string(d["y"].shape()), "2x4");
  EXPECT_EQ(d["y"].strings(), (S{"a", "b", "", "c", "", "", "", ""}));
  EXPECT_EQ(values(d["n"]), (std::vector<double>{4, 1}));
  // Without a delimiter, runs of whitespace separate and the ends are trimmed.
  auto w = split("", {" hello  world ", "x"});
  ASSERT_EQ(shape_to_string(w["y"].shape()), "2x2");
  EXPECT_EQ(w["y"].strings(), (S{"hello", "world", "x", ""}));
  EXPECT_EQ(values(w["n"]), (std::vector<double>{2, 1}));
  auto m = split(R"(<delimiter = ",", maxsplit = 1>)", {"a,b,c", "d"});
  EXPECT_EQ(m["y"].strings(), (S{"a", "b,c", "d", ""}));
  EXPECT_EQ(values(m["n"]), (std::vector<double>{2, 1}));
}

TEST(RegexFullMatch, MatchesWholeStrings) {
  const std::string m = R"(<ir_version: 8, opset_import: ["" : 20]>
    g (string[3] x) => (bool[3] z) { z = RegexFullMatch <pattern = "a+[a-z]"> (x) })";
  auto z = run_op(m, {{"x", tensor<std::string>({3}, S{"aab", "aab!", "b"})}});
  ASSERT_EQ(z.dtype(), DType::kBool);
  EXPECT_EQ(values(z), (std::vector<double>{1, 0, 0}));
  auto err = run_op_error(R"(<ir_version: 8, opset_import: ["" : 20]>
    g (string[1] x) => (bool[1] z) { z = RegexFullMatch <pattern = "(a"> (x) })",
                          {{"x", tensor<std::string>({1}, S{"a"})}});
  EXPECT_NE(err.find("is not a regular expression std::regex (ECMAScript) accepts"),
            std::string::npos)
      << err;
  // A string long enough to overflow the stack of std::regex's recursive matcher is refused.
  auto long_err =
      run_op_error(m, {{"x", tensor<std::string>({3}, S{"a", std::string(5000, 'a'), ""})}});
  EXPECT_NE(long_err.find("element 1 has 5000 bytes, more than the 1024"), std::string::npos)
      << long_err;
}

}  // namespace
}  // namespace onnxdbg::testing
