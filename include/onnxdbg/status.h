// Status and Expected<T>: the one error style used across module boundaries in onnxdbg.
// A Status carries a message and a chain of context lines ("while running node conv_3 (Conv)"),
// printed outermost first so the user reads one sentence that says what and where.
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace onnxdbg {

/// Broad class of an error; decides the CLI exit code and lets callers branch without parsing text.
enum class ErrorCode {
  kOk = 0,
  kInvalidArgument,  ///< bad user input: option, shape, file content
  kNotFound,         ///< missing file, tensor, input
  kUnsupported,      ///< an op, dtype or feature not implemented
  kModelError,       ///< the model itself is malformed or inconsistent
  kBackendError,     ///< a backend refused, crashed or timed out
  kInternal,         ///< a broken invariant inside onnxdbg
  kCancelled,        ///< the caller stopped the call (Ctrl-C, api::CancelToken)
};

/// Result of an operation that returns no value. Cheap to copy when ok.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(ErrorCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status ok() { return Status(); }
  bool is_ok() const { return code_ == ErrorCode::kOk; }
  explicit operator bool() const { return is_ok(); }
  ErrorCode code() const { return code_; }
  /// The innermost message, without context.
  const std::string& message() const { return message_; }
  /// Context lines, innermost first.
  const std::vector<std::string>& context() const { return context_; }

  /// Adds a context line ("while loading model.onnx"); returns *this for chaining.
  Status& with_context(std::string line) & {
    if (!is_ok()) context_.push_back(std::move(line));
    return *this;
  }
  Status&& with_context(std::string line) && {
    if (!is_ok()) context_.push_back(std::move(line));
    return std::move(*this);
  }

  /// One line for people: "message (while A; while B)", with the outermost context last.
  std::string to_string() const;

 private:
  ErrorCode code_ = ErrorCode::kOk;
  std::string message_;
  std::vector<std::string> context_;
};

inline Status invalid_argument(std::string m) {
  return {ErrorCode::kInvalidArgument, std::move(m)};
}
inline Status not_found(std::string m) { return {ErrorCode::kNotFound, std::move(m)}; }
inline Status unsupported(std::string m) { return {ErrorCode::kUnsupported, std::move(m)}; }
inline Status model_error(std::string m) { return {ErrorCode::kModelError, std::move(m)}; }
inline Status backend_error(std::string m) { return {ErrorCode::kBackendError, std::move(m)}; }
inline Status cancelled(std::string m) { return {ErrorCode::kCancelled, std::move(m)}; }
inline Status internal_error(std::string m) { return {ErrorCode::kInternal, std::move(m)}; }

/// A value or the Status explaining why there is none.
template <class T>
class [[nodiscard]] Expected {
 public:
  Expected(T value) : v_(std::move(value)) {}        // NOLINT(google-explicit-constructor)
  Expected(Status status) : v_(std::move(status)) {  // NOLINT(google-explicit-constructor)
    assert(!std::get<Status>(v_).is_ok() && "Expected built from an ok Status");
  }

  bool has_value() const { return v_.index() == 0; }
  explicit operator bool() const { return has_value(); }
  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  /// The error; only valid when !has_value().
  const Status& status() const& { return std::get<1>(v_); }
  Status&& status() && { return std::get<1>(std::move(v_)); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace onnxdbg

#define ODB_CONCAT_INNER(a, b) a##b
#define ODB_CONCAT(a, b) ODB_CONCAT_INNER(a, b)

/// Returns the Status from the enclosing function when `expr` (a Status) is an error.
#define ODB_RETURN_IF_ERROR(expr)                 \
  do {                                            \
    ::onnxdbg::Status odb_status_ = (expr);       \
    if (!odb_status_.is_ok()) return odb_status_; \
  } while (0)

/// `ODB_ASSIGN_OR_RETURN(auto x, f());` binds the value of an Expected or returns its Status.
#define ODB_ASSIGN_OR_RETURN(lhs, expr) \
  ODB_ASSIGN_OR_RETURN_IMPL(ODB_CONCAT(odb_exp_, __LINE__), lhs, expr)
#define ODB_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr)       \
  auto tmp = (expr);                                    \
  if (!tmp.has_value()) return std::move(tmp).status(); \
  lhs = std::move(tmp).value()
