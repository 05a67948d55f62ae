// The one error vocabulary of skade: every fallible function returns Result<T>.
#pragma once

#include <expected>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace skade {

/// What went wrong, classified by what the caller should do about it.
enum class ErrorKind {
  kInvalidArgument,     // caller's input is wrong; fix it and retry
  kNotFound,            // namespace, table, snapshot, file or ref missing
  kAlreadyExists,       // create of something that exists
  kNotEmpty,            // drop of a namespace that still holds tables
  kCommitConflict,      // someone else committed first: reload and retry
  kCommitStateUnknown,  // the commit may or may not have landed: never clean up
  kCorrupt,             // bytes on disk do not parse: give up, name the file
  kIoError,             // the file system failed: may be retried
  kUnsupported,         // valid but not implemented by skade
  kInternal,            // a bug
};

std::string_view ErrorKindName(ErrorKind kind);

/// An error kind plus a message that names the file, table or snapshot concerned.
struct [[nodiscard]] Error {
  ErrorKind kind;
  std::string message;

  /// Prefixes `context: ` to the message (used at module boundaries).
  Error WithContext(std::string_view context) const&;
  Error WithContext(std::string_view context) &&;
  std::string ToString() const;
};

template <typename T>
using Result = std::expected<T, Error>;
using Status = Result<void>;

inline std::unexpected<Error> MakeError(ErrorKind kind, std::string message) {
  return std::unexpected<Error>(Error{kind, std::move(message)});
}
/// Problems found at once, for one error: "first; second; ...".
std::string JoinProblems(const std::vector<std::string>& problems);

inline std::unexpected<Error> InvalidArgument(std::string m) {
  return MakeError(ErrorKind::kInvalidArgument, std::move(m));
}
inline std::unexpected<Error> NotFound(std::string m) {
  return MakeError(ErrorKind::kNotFound, std::move(m));
}
inline std::unexpected<Error> Corrupt(std::string m) {
  return MakeError(ErrorKind::kCorrupt, std::move(m));
}
inline std::unexpected<Error> IoError(std::string m) {
  return MakeError(ErrorKind::kIoError, std::move(m));
}
inline std::unexpected<Error> Unsupported(std::string m) {
  return MakeError(ErrorKind::kUnsupported, std::move(m));
}
inline std::unexpected<Error> Internal(std::string m) {
  return MakeError(ErrorKind::kInternal, std::move(m));
}

}  // namespace skade

#define SKADE_CONCAT_IMPL(a, b) a##b
#define SKADE_CONCAT(a, b) SKADE_CONCAT_IMPL(a, b)

/// Returns the error of a Result/Status expression from the enclosing function.
#define SKADE_RETURN_IF_ERROR(expr)                                        \
  do {                                                                     \
    auto&& skade_status_tmp = (expr);                                      \
    if (!skade_status_tmp.has_value())                                     \
      return std::unexpected<::skade::Error>(std::move(skade_status_tmp).error()); \
  } while (0)

/// Like SKADE_RETURN_IF_ERROR but prefixes context to the error message.
#define SKADE_RETURN_IF_ERROR_CTX(expr, ctx)                               \
  do {                                                                     \
    auto&& skade_status_tmp = (expr);                                      \
    if (!skade_status_tmp.has_value())                                     \
      return std::unexpected<::skade::Error>(                              \
          std::move(skade_status_tmp).error().WithContext(ctx));           \
  } while (0)

#define SKADE_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr)                        \
  auto tmp = (expr);                                                       \
  if (!tmp.has_value()) return std::unexpected<::skade::Error>(std::move(tmp).error()); \
  lhs = std::move(tmp).value()

/// `SKADE_ASSIGN_OR_RETURN(auto x, Foo());` binds the value or returns the error.
#define SKADE_ASSIGN_OR_RETURN(lhs, expr) \
  SKADE_ASSIGN_OR_RETURN_IMPL(SKADE_CONCAT(skade_result_, __LINE__), lhs, expr)
