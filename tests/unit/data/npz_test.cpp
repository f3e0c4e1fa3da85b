// Tests of .npy / .npz reading and writing: round trips of every dtype, files numpy wrote
// (tests/fixtures, made with numpy 1.24), and damaged files that must give errors, not crashes.
#include "data/npz.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "../test_util.h"
#include "data/npy.h"

namespace onnxdbg {
namespace {

using testing::npy_with_header;

namespace fs = std::filesystem;

const fs::path kNpzFixtures = fs::path(ONNXDBG_SOURCE_DIR) / "tests" / "fixtures";

/// `name` in this process's folder (a TempDir, removed when the tests end).
fs::path temp_path(const std::string& name) {
  static const TempDir dir = testing::make_temp_dir("onnxdbg_npz_test_");
  return dir.path() / name;
}

void write_bytes(const fs::path& p, const std::string& bytes) {
  std::ofstream(p, std::ios::binary | std::ios::trunc)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string read_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A tensor of `dtype` with a few distinct values (0, 1, 2, ... as that type).
Tensor sample_tensor(DType dtype, Shape shape) {
  Tensor t(dtype, std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i)
    t.set_from_double(i, dtype == DType::kBool ? i % 2 : i - 2);
  return t;
}

void expect_same(const Tensor& a, const Tensor& b) {
  ASSERT_EQ(a.dtype(), b.dtype());
  ASSERT_EQ(a.shape(), b.shape());
  if (a.dtype() == DType::kString) {
    EXPECT_EQ(a.strings(), b.strings());
  } else {
    ASSERT_EQ(a.nbytes(), b.nbytes());
    if (a.nbytes()) {
      EXPECT_EQ(0, std::memcmp(a.raw(), b.raw(), a.nbytes()));
    }
  }
}

// An .npy file with a hand-written header (for damaged-file tests).
TEST(Npy, RoundTripEveryDtype) {
  for (DType d : {DType::kFloat, DType::kDouble, DType::kFloat16, DType::kInt8, DType::kInt16,
                  DType::kInt32, DType::kInt64, DType::kUint8, DType::kUint16, DType::kUint32,
                  DType::kUint64, DType::kBool}) {
    for (const Shape& shape : {Shape{}, Shape{0}, Shape{5}, Shape{2, 3, 4}, Shape{3, 0, 2}}) {
      SCOPED_TRACE(std::string(dtype_name(d)) + " " + shape_to_string(shape));
      const Tensor t = sample_tensor(d, shape);
      const std::string bytes = write_npy(t);
      EXPECT_EQ(0u, (bytes.find('\n') + 1) % 64) << "data must start on a 64-byte boundary";
      auto back = read_npy(bytes);
      ASSERT_TRUE(back.has_value()) << back.status().to_string();
      expect_same(t, *back);
    }
  }
}

TEST(Npy, StringsAndBFloat16) {
  const Tensor s = Tensor::from_vector<std::string>({3}, {"a", "", "hello"});
  auto back = read_npy(write_npy(s));
  ASSERT_TRUE(back.has_value()) << back.status().to_string();
  expect_same(s, *back);

  Tensor bf(DType::kBFloat16, {2});
  bf.set_from_double(0, 1.5);
  bf.set_from_double(1, -3);
  auto widened = read_npy(write_npy(bf));
  ASSERT_TRUE(widened.has_value());
  EXPECT_EQ(widened->dtype(), DType::kFloat);
  testing::expect_tensor_near(*widened, {2}, {1.5, -3});
}

TEST(Npy, ReadsVersion2And3Headers) {
  for (int version : {2, 3}) {
    const std::string data = std::string("\x01\x00\x02\x00", 4);
    auto t = read_npy(npy_with_header("{'descr': '<i2', 'fortran_order': False, 'shape': (2,), }",
                                      data, version));
    ASSERT_TRUE(t.has_value()) << t.status().to_string();
    testing::expect_tensor_near(*t, {2}, {1, 2});
  }
}

TEST(Npy, NumpyWroteBigEndianAndFortranOrderAreUnsupported) {
  auto be = load_npy(kNpzFixtures / "numpy_be.npy");
  ASSERT_FALSE(be.has_value());
  EXPECT_EQ(be.status().code(), ErrorCode::kUnsupported);
  EXPECT_NE(be.status().message().find("big-endian"), std::string::npos) << be.status().to_string();
  EXPECT_NE(be.status().message().find("numpy_be.npy"), std::string::npos);
  auto f = load_npy(kNpzFixtures / "numpy_fortran.npy");
  ASSERT_FALSE(f.has_value());
  EXPECT_EQ(f.status().code(), ErrorCode::kUnsupported);
  EXPECT_NE(f.status().message().find("Fortran"), std::string::npos) << f.status().to_string();
}

TEST(Npy, DamagedFilesGiveErrors) {
  const std::string f4 = std::string(8, '\0');
  struct Case {
    std::string bytes, expect;
  };
  const std::vector<Case> cases = {
      {"", "not a .npy file"},
      {"PK\x03\x04 hello", "not a .npy file"},
      {std::string("\x93NUMPY\x01", 7), "truncated"},
      {std::string("\x93NUMPY\x01\x00\xff\x00{", 11), "truncated"},
      {std::string("\x93NUMPY\x09\x00", 8), "version 9.0"},
      {npy_with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", f4),
       "truncated"},
      {npy_with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", f4), "needs 4"},
      {npy_with_header(
           "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }", f4),
       "overflows"},
      {npy_with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296, "
                       "4294967296), }",
                       f4),
       "too many"},
      {npy_with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }", f4),
       "non-negative"},
      {npy_with_header("{'descr': '<f4', 'fortran_order': False}", f4), "lacks"},
      {npy_with_header("{'descr': '<f4', 'fortran_order': maybe, 'shape': (2,), }", f4),
       "True or False"},
      {npy_with_header("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }", f4),
       "structured"},
      {npy_with_header("{'descr': '|O', 'fortran_order': False, 'shape': (2,), }", f4), "'|O'"},
      {npy_with_header("{'descr': '<f3', 'fortran_order': False, 'shape': (2,), }", f4),
       "not supported"},
      {npy_with_header("garbage", f4), "malformed"},
  };
  for (const auto& c : cases) {
    auto t = read_npy(c.bytes, "'case.npy'");
    ASSERT_FALSE(t.has_value()) << "expected an error containing '" << c.expect << "'";
    EXPECT_NE(t.status().to_string().find(c.expect), std::string::npos) << t.status().to_string();
    EXPECT_NE(t.status().to_string().find("case.npy"), std::string::npos) << t.status().to_string();
  }
}

TEST(Npy, EveryTruncationFailsCleanly) {
  const std::string full = write_npy(sample_tensor(DType::kFloat, {3, 4}));
  for (size_t n = 0; n < full.size(); ++n)
    EXPECT_FALSE(read_npy(full.substr(0, n)).has_value()) << n;
}

TEST(Npz, RoundTripAllDtypesAndOddNames) {
  std::map<std::string, Tensor> in;
  int k = 0;
  for (DType d :
       {DType::kFloat, DType::kDouble, DType::kFloat16, DType::kInt8, DType::kInt16, DType::kInt32,
        DType::kInt64, DType::kUint8, DType::kUint16, DType::kUint32, DType::kUint64, DType::kBool})
    in.emplace("t" + std::to_string(k++) + "_" + std::string(dtype_name(d)),
               sample_tensor(d, {2, 3}));
  in.emplace("scope/conv:0", sample_tensor(DType::kFloat, {}));
  in.emplace("empty", sample_tensor(DType::kFloat, {0, 4}));
  in.emplace("words", Tensor::from_vector<std::string>({2}, {"x", "yz"}));
  for (bool compress : {false, true}) {
    const fs::path p = temp_path(compress ? "deflated.npz" : "stored.npz");
    ASSERT_TRUE(save_npz(p, in, compress).is_ok());
    auto out = load_npz(p);
    ASSERT_TRUE(out.has_value()) << out.status().to_string();
    ASSERT_EQ(out->size(), in.size());
    for (const auto& [name, t] : in) {
      SCOPED_TRACE(name);
      ASSERT_TRUE(out->count(name));
      expect_same(t, out->at(name));
    }
  }
}

TEST(Npz, EmptyArchiveRoundTrips) {
  const fs::path p = temp_path("empty.npz");
  ASSERT_TRUE(save_npz(p, {}).is_ok());
  auto out = load_npz(p);
  ASSERT_TRUE(out.has_value()) << out.status().to_string();
  EXPECT_TRUE(out->empty());
}

TEST(Npz, ReadsWhatNumpyWrote) {
  auto m = load_npz(kNpzFixtures / "numpy_small.npz");
  ASSERT_TRUE(m.has_value()) << m.status().to_string();
  ASSERT_EQ(m->size(), 5u);
  const Tensor& x = m->at("x");
  EXPECT_EQ(x.dtype(), DType::kFloat);
  testing::expect_tensor_near(x, {2, 3}, {0, NAN, 2, 3, 4, 5});
  EXPECT_EQ(m->at("ids").dtype(), DType::kInt64);
  testing::expect_tensor_near(m->at("ids"), {3}, {1, -2, 3});
  EXPECT_EQ(m->at("mask").dtype(), DType::kBool);
  testing::expect_tensor_near(m->at("mask"), {2}, {1, 0});
  EXPECT_EQ(m->at("half").dtype(), DType::kFloat16);
  testing::expect_tensor_near(m->at("half"), {2}, {1.5, -2});
  EXPECT_EQ(m->at("scope/w:0").dtype(), DType::kUint8);
  testing::expect_tensor_near(m->at("scope/w:0"), {}, {7});

  auto d = load_npz(kNpzFixtures / "numpy_small_deflated.npz");
  ASSERT_TRUE(d.has_value()) << d.status().to_string();
  testing::expect_tensor_near(d->at("x"), {2, 3}, {0, NAN, 2, 3, 4, 5});
  ASSERT_EQ(d->at("s").dtype(), DType::kString);  // numpy '<U2'
  EXPECT_EQ(d->at("s").strings(), (std::vector<std::string>{"ab", "c"}));
}

TEST(Npz, MissingAndNonZipFiles) {
  auto missing = load_npz(temp_path("nope.npz"));
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.status().code(), ErrorCode::kNotFound);

  const fs::path text = temp_path("text.npz");
  write_bytes(text, "this is not a zip file\n");
  auto t = load_npz(text);
  ASSERT_FALSE(t.has_value());
  EXPECT_NE(t.status().to_string().find("not an .npz file"), std::string::npos)
      << t.status().to_string();
  EXPECT_NE(t.status().to_string().find("text.npz"), std::string::npos);
}

TEST(Npz, EveryTruncationFailsCleanly) {
  const std::string full = read_bytes(kNpzFixtures / "numpy_small.npz");
  ASSERT_GT(full.size(), 100u);
  const fs::path p = temp_path("truncated.npz");
  for (size_t n = 0; n < full.size(); n += 7) {
    write_bytes(p, full.substr(0, n));
    auto m = load_npz(p);
    EXPECT_FALSE(m.has_value()) << "truncated to " << n << " bytes";
    if (!m.has_value()) {
      EXPECT_NE(m.status().to_string().find("truncated.npz"), std::string::npos);
    }
  }
}

TEST(Npz, CorruptedBytesNeverCrash) {
  // Flip each byte in turn: the result may still load (a byte of padding), but must not crash,
  // and a damaged entry's error names the entry.
  const std::string full = read_bytes(kNpzFixtures / "numpy_small_deflated.npz");
  const fs::path p = temp_path("flipped.npz");
  int errors = 0;
  for (size_t i = 0; i < full.size(); ++i) {
    std::string b = full;
    b[i] = static_cast<char>(b[i] ^ 0x5a);
    write_bytes(p, b);
    auto m = load_npz(p);
    if (!m.has_value()) {
      ++errors;
      EXPECT_NE(m.status().to_string().find("flipped.npz"), std::string::npos)
          << m.status().to_string();
    }
  }
  EXPECT_GT(errors, 0);
}

TEST(Npz, LyingEntryIsReportedByName) {
  std::map<std::string, Tensor> in;
  in.emplace("good", sample_tensor(DType::kFloat, {2}));
  const fs::path p = temp_path("lying.npz");
  ASSERT_TRUE(save_npz(p, in).is_ok());
  // Make the stored .npy header claim 3 elements where 2 are stored (same byte length).
  std::string b = read_bytes(p);
  const size_t at = b.find("(2,)");
  ASSERT_NE(at, std::string::npos);
  b[at + 1] = '3';
  write_bytes(p, b);
  auto m = load_npz(p);
  ASSERT_FALSE(m.has_value());
  const std::string msg = m.status().to_string();
  // libzip catches the CRC mismatch first; either way the entry is named.
  EXPECT_NE(msg.find("entry 'good.npy'"), std::string::npos) << msg;
}

TEST(Npz, NonNpyEntryIsAnError) {
  // A zip made by hand: one stored entry "readme.txt".
  const fs::path p = temp_path("other.npz");
  std::map<std::string, Tensor> in;
  in.emplace("a", sample_tensor(DType::kInt32, {1}));
  ASSERT_TRUE(save_npz(p, in).is_ok());
  std::string b = read_bytes(p);
  for (size_t at; (at = b.find("a.npy")) != std::string::npos;) b.replace(at, 5, "a.txt");
  write_bytes(p, b);
  auto m = load_npz(p);
  ASSERT_FALSE(m.has_value());
  EXPECT_NE(m.status().to_string().find("'a.txt' is not a .npy array"), std::string::npos)
      << m.status().to_string();
}

TEST(Npz, ReadsArchivesFromMemoryAsFromFiles) {
  // read_npz (what the npz fuzz target feeds) gives what load_npz gives on the same bytes, and
  // its errors name what the caller called the bytes.
  for (const char* name : {"numpy_small.npz", "numpy_small_deflated.npz"}) {
    SCOPED_TRACE(name);
    const std::string bytes = read_bytes(kNpzFixtures / name);
    auto from_file = load_npz(kNpzFixtures / name);
    auto from_memory = read_npz(bytes, "the archive");
    ASSERT_TRUE(from_file.has_value() && from_memory.has_value());
    ASSERT_EQ(from_file->size(), from_memory->size());
    for (const auto& [key, t] : *from_file) {
      ASSERT_TRUE(from_memory->count(key)) << key;
      expect_same(t, from_memory->at(key));
    }
  }
  const std::vector<std::string> damaged = {
      std::string(), "not a zip", read_bytes(kNpzFixtures / "numpy_small.npz").substr(0, 60)};
  for (const std::string& bad : damaged) {
    auto r = read_npz(bad, "the archive");
    ASSERT_FALSE(r.has_value()) << bad.size();
    EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(r.status().to_string().find("the archive"), std::string::npos)
        << r.status().to_string();
  }
}

}  // namespace
}  // namespace onnxdbg
