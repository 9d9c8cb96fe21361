#pragma once
// Results at module boundaries: std::expected with one error type. An error carries a kind from
// a fixed set that callers branch on (never a raw number), a one-line message for people, and,
// when there is one, the HTTP status or errno behind it for logs and tests.
#include <expected>
#include <string>
#include <string_view>
#include <utility>

namespace cn {

enum class ErrorKind {
  invalid,       // bad input or configuration: the same call cannot succeed
  io,            // a local file, lock or socket operation failed (see sys_errno)
  transport,     // no usable answer: refused, reset, closed early
  timeout,       // the deadline passed
  tls,           // handshake or certificate: an operator must fix files or names
  cancelled,     // the caller stopped (shutdown)
  http,          // the server answered with a status no kind below names (see status)
  not_found,     // 404
  permission,    // 401 or 403: a token or ACL lacks a capability
  rate_limited,  // 429, after the client's own waits
  bad_answer,    // 2xx whose body breaks the API's shape or size, or an answer about something else
};

std::string_view to_string(ErrorKind kind);

struct Error {
  ErrorKind kind = ErrorKind::invalid;
  std::string message;
  int status = 0;     // HTTP status when a server answered, else 0
  int sys_errno = 0;  // errno behind an io or timeout error, else 0
};

template <class T>
using Result = std::expected<T, Error>;

using Status = std::expected<void, Error>;

inline std::unexpected<Error> fail(std::string message) {
  return std::unexpected<Error>(Error{ErrorKind::invalid, std::move(message), 0, 0});
}

inline std::unexpected<Error> fail(ErrorKind kind, std::string message) {
  return std::unexpected<Error>(Error{kind, std::move(message), 0, 0});
}

// A failed system call: ETIMEDOUT becomes a timeout, anything else io.
std::unexpected<Error> fail_errno(std::string message, int err);

// The text of an errno value ("No such file or directory"). Use it instead of std::strerror,
// which may hand every thread the same buffer: the labeler calls this from several threads.
std::string errno_text(int err);

// The error for an HTTP answer with a non-success status: the kind follows the status.
Error http_error(int status, std::string message);

// The same error with `context` in front of its message ("Nomad: " + ...), kind kept.
Error with_context(std::string_view context, Error error);

}  // namespace cn
