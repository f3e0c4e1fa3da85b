// The jobs of a batch: commands, models, cache keys.
#include "batch/jobs.h"

#include <fmt/format.h>
#include <openssl/evp.h>

#include <algorithm>
#include <array>
#include <fstream>
#include <memory>

#include "core/onnx.h"
#include "model/external_data.h"

namespace onnxdbg::batch {

namespace fs = std::filesystem;

namespace {

constexpr std::array<CommandTraits, 5> kCommands{{
    {"run", true, true, false, "--save-repro"},
    {"lint", false, true, false, ""},
    {"inspect", false, false, false, ""},
    {"reduce", true, true, true, ""},
    {"bisect-optimizers", true, true, false, ""},
}};

/// An incremental SHA-256 (OpenSSL's EVP).
class Sha256 {
 public:
  Sha256() : ctx_(EVP_MD_CTX_new(), EVP_MD_CTX_free) {
    EVP_DigestInit_ex(ctx_.get(), EVP_sha256(), nullptr);
  }
  void update(std::string_view bytes) { EVP_DigestUpdate(ctx_.get(), bytes.data(), bytes.size()); }
  /// Adds `bytes` and a separator no text holds, so that ("ab","c") and ("a","bc") differ.
  void field(std::string_view bytes) {
    update(bytes);
    update(std::string_view("\0\x1f", 2));
  }
  std::string hex() {
    std::array<unsigned char, EVP_MAX_MD_SIZE> md{};
    unsigned int n = 0;
    EVP_DigestFinal_ex(ctx_.get(), md.data(), &n);
    std::string out;
    for (unsigned int i = 0; i < n; ++i) out += fmt::format("{:02x}", md[i]);
    return out;
  }

 private:
  std::unique_ptr<EVP_MD_CTX, void (*)(EVP_MD_CTX*)> ctx_;
};

/// Adds the bytes of `file` to `h`, 1 MiB at a time; keeps the first 2 GiB in `head` when given.
Status hash_file(const fs::path& file, Sha256& h, std::string* head) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return not_found(fmt::format("cannot read '{}'", file.string()));
  std::string buf(size_t{1} << 20, '\0');
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    const auto n = static_cast<size_t>(in.gcount());
    if (n == 0) break;
    h.update(std::string_view(buf.data(), n));
    if (head && head->size() + n <= (size_t{2} << 30)) head->append(buf.data(), n);
  }
  if (in.bad()) return invalid_argument(fmt::format("cannot read '{}'", file.string()));
  return Status::ok();
}

/// The external data files a model's bytes name, those that stay in its folder.
std::vector<std::string> external_files(const std::string& bytes) {
  onnx::ModelProto m;
  if (bytes.empty() || !m.ParseFromString(bytes)) return {};
  std::vector<std::string> out;
  for (const auto& loc : external_data_locations(m.graph())) {
    const fs::path p(loc);
    const bool escapes =
        p.is_absolute() ||
        std::any_of(p.begin(), p.end(), [](const fs::path& part) { return part == ".."; });
    if (!escapes) out.push_back(loc);
  }
  return out;
}

/// A list file's line split into path and options; relative paths against `dir`.
ModelEntry list_entry(const std::string& line, const fs::path& dir, const fs::path& list) {
  auto words = split_command_line(line);
  if (!words) return {line, {}, fmt::format("{}: {}", list.string(), words.status().message())};
  ModelEntry e;
  const fs::path p((*words)[0]);
  e.path = (p.is_absolute() ? p : dir / p).lexically_normal().string();
  e.args.assign(words->begin() + 1, words->end());
  std::error_code ec;
  if (!fs::exists(e.path, ec)) e.problem = "no such file or folder";
  return e;
}

bool is_text(const std::string& s) {
  return std::none_of(s.begin(), s.end(), [](char c) { return c == '\0'; });
}

Status add_folder(const fs::path& dir, const fs::path& skip, std::vector<ModelEntry>& out) {
  std::error_code ec;
  std::vector<std::string> found;
  fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    if (!skip.empty() && fs::equivalent(it->path(), skip, ec)) {
      it.disable_recursion_pending();
      continue;
    }
    if (it->path().extension() == ".onnx" && it->is_regular_file(ec))
      found.push_back(it->path().string());
  }
  if (ec)
    return invalid_argument(fmt::format("cannot search '{}': {}", dir.string(), ec.message()));
  std::sort(found.begin(), found.end());
  for (auto& f : found) out.push_back({std::move(f), {}, ""});
  return Status::ok();
}

Status add_list(const fs::path& list, const fs::path& skip, std::vector<ModelEntry>& out) {
  std::ifstream in(list, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!in && !in.eof()) return invalid_argument(fmt::format("cannot read '{}'", list.string()));
  if (!is_text(text))
    return invalid_argument(fmt::format(
        "'{}' is neither an .onnx model nor a list of models (it is not text); name models "
        "with the .onnx extension",
        list.string()));
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    start = end + 1;
    if (auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    ModelEntry e = list_entry(line, list.parent_path(), list);
    std::error_code ec;
    if (!e.problem.empty() || !fs::is_directory(e.path, ec)) {
      out.push_back(std::move(e));
      continue;
    }
    // A folder: its models, each with the line's options.
    const size_t first = out.size();
    ODB_RETURN_IF_ERROR(add_folder(e.path, skip, out));
    for (size_t i = first; i < out.size(); ++i) out[i].args = e.args;
  }
  return Status::ok();
}

}  // namespace

const CommandTraits* find_command(std::string_view name) {
  for (const auto& c : kCommands)
    if (c.name == name) return &c;
  return nullptr;
}

std::string command_names() {
  std::string s;
  for (size_t i = 0; i < kCommands.size(); ++i)
    s += fmt::format("{}{}", i == 0 ? "" : (i + 1 == kCommands.size() ? " and " : ", "),
                     kCommands[i].name);
  return s;
}

Expected<std::vector<std::string>> split_command_line(std::string_view text) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  char quote = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quote == '\'') {
      if (c == '\'')
        quote = 0;
      else
        word += c;
    } else if (c == '\\' && (quote == 0 || (i + 1 < text.size() &&
                                            std::string_view("$`\"\\\n").find(text[i + 1]) !=
                                                std::string_view::npos))) {
      if (i + 1 == text.size())
        return invalid_argument(fmt::format("'{}' ends in a backslash", text));
      word += text[++i];
      in_word = true;
    } else if (quote == '"') {
      if (c == '"')
        quote = 0;
      else
        word += c;
    } else if (c == '\'' || c == '"') {
      quote = c;
      in_word = true;
    } else if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      if (in_word) words.push_back(std::move(word));
      word.clear();
      in_word = false;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (quote)
    return invalid_argument(fmt::format("'{}' has a {} quote that is not closed", text, quote));
  if (in_word) words.push_back(std::move(word));
  return words;
}

Expected<Command> parse_command(std::string_view text) {
  ODB_ASSIGN_OR_RETURN(std::vector<std::string> words, split_command_line(text));
  if (words.empty()) return invalid_argument("a --command is empty; give one such as \"lint\"");
  Command c;
  c.text = fmt::format("{}", fmt::join(words, " "));
  c.traits = find_command(words[0]);
  if (!c.traits)
    return invalid_argument(
        fmt::format("--command \"{}\": batch runs {} (one model each), not '{}'", c.text,
                    command_names(), words[0]));
  for (size_t i = 1; i < words.size(); ++i) {
    const std::string& w = words[i];
    const std::string flag = w.substr(0, w.find('='));
    if (flag == "--json" || flag == "--html" || flag == "-o" || flag == "--output")
      return invalid_argument(fmt::format(
          "--command \"{}\" gives {} itself; batch gives each job its own (its JSON and page "
          "are in the report folder)",
          c.text, flag));
    c.args.push_back(w);
  }
  return c;
}

Expected<std::vector<ModelEntry>> find_models(const std::vector<std::string>& inputs,
                                              const fs::path& skip) {
  std::vector<ModelEntry> out;
  for (const auto& input : inputs) {
    std::error_code ec;
    const fs::file_status st = fs::status(input, ec);
    if (ec || !fs::exists(st)) {
      out.push_back({input, {}, "no such file or folder"});
    } else if (fs::is_directory(st)) {
      ODB_RETURN_IF_ERROR(add_folder(input, skip, out));
    } else if (fs::path(input).extension() != ".onnx") {
      ODB_RETURN_IF_ERROR(add_list(input, skip, out));
    } else {
      out.push_back({input, {}, ""});
    }
  }
  return out;
}

std::string sha256_hex(std::string_view bytes) {
  Sha256 h;
  h.update(bytes);
  return h.hex();
}

Expected<ModelDigest> model_digest(const fs::path& model) {
  Sha256 h;
  std::string head;
  ODB_RETURN_IF_ERROR(hash_file(model, h, &head));
  ModelDigest d;
  std::error_code ec;
  d.bytes = fs::file_size(model, ec);
  const std::vector<std::string> files = external_files(head);
  d.external_data = !files.empty();
  for (const auto& loc : files) {
    h.field(loc);
    // A missing external file is the job's own error to report; the key still differs.
    if (Status st = hash_file(model.parent_path() / loc, h, nullptr); !st) h.field("missing");
  }
  d.sha256 = h.hex();
  return d;
}

std::string job_key(std::string_view model_digest, const Command& command,
                    const std::vector<std::string>& model_args, double timeout,
                    uint64_t max_memory) {
  Sha256 h;
  h.field("onnxdbg batch job 1");
  h.field(onnxdbg_version());
  h.field(model_digest);
  h.field(command.traits->name);
  for (const auto& a : command.args) h.field(a);
  h.field("model options");
  if (command.traits->takes_inputs)
    for (const auto& a : model_args) h.field(a);
  h.field(fmt::format("timeout={} max_memory={}", timeout, max_memory));
  return h.hex();
}

std::string_view onnxdbg_version() { return ONNXDBG_VERSION; }

}  // namespace onnxdbg::batch
