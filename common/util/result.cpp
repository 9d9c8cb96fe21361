#include "common/util/result.h"

#include <cerrno>
#include <cstring>

namespace cn {

std::string_view to_string(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::invalid:
      return "invalid";
    case ErrorKind::io:
      return "io";
    case ErrorKind::transport:
      return "transport";
    case ErrorKind::timeout:
      return "timeout";
    case ErrorKind::tls:
      return "tls";
    case ErrorKind::cancelled:
      return "cancelled";
    case ErrorKind::http:
      return "http";
    case ErrorKind::not_found:
      return "not_found";
    case ErrorKind::permission:
      return "permission";
    case ErrorKind::rate_limited:
      return "rate_limited";
    case ErrorKind::bad_answer:
      return "bad_answer";
  }
  return "invalid";
}

std::unexpected<Error> fail_errno(std::string message, int err) {
  const ErrorKind kind = err == ETIMEDOUT ? ErrorKind::timeout : ErrorKind::io;
  return std::unexpected<Error>(Error{kind, std::move(message), 0, err});
}

std::string errno_text(int err) {
  char buffer[256];
  // GNU strerror_r (glibc's with _GNU_SOURCE, which g++ and clang++ define for C++): it returns
  // the text, in `buffer` or in static storage, and never fails.
  return ::strerror_r(err, buffer, sizeof buffer);
}

Error http_error(int status, std::string message) {
  ErrorKind kind = ErrorKind::http;
  if (status == 404)
    kind = ErrorKind::not_found;
  else if (status == 401 || status == 403)
    kind = ErrorKind::permission;
  else if (status == 429)
    kind = ErrorKind::rate_limited;
  return Error{kind, std::move(message), status, 0};
}

Error with_context(std::string_view context, Error error) {
  error.message.insert(0, context);
  return error;
}

}  // namespace cn
