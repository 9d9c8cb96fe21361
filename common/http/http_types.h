#pragma once
// Requests, responses and transport failures of the HTTP layer. An HTTP status is never a
// failure here: the API clients decide what a 404 or a 429 means.
#include <chrono>
#include <expected>
#include <optional>
#include <string>
#include <string_view>

#include "common/http/headers.h"
#include "common/util/result.h"

namespace cn::http {

enum class Method { get, put, post, patch, del };
std::string_view to_string(Method m);

struct Request {
  Method method = Method::get;
  // Path plus query, starting with '/', already percent-encoded (see url.h).
  std::string target;
  // Sent after the client's default headers; a field named like a default replaces it.
  Headers headers;
  // Sent when set, also on GET (the Cilium agent takes a label filter as a GET body).
  std::optional<std::string> body;
  // Whole exchange, connect included. 0: the client's default_timeout. Streams ignore it.
  std::chrono::milliseconds timeout{0};
};

struct Response {
  int status = 0;
  Headers headers;
  std::string body;
};

// A failure is "no usable HTTP answer", as a cn::Error: transport (refused, reset, closed
// early, a protocol violation), timeout, tls, cancelled (the caller's stop), bad_answer (a body
// over the client's limit) or invalid (a request this client cannot send).
template <class T>
using HttpResult = Result<T>;

// A body from a server that our models refuse is that server's fault, not bad input of ours:
// invalid becomes bad_answer (retried later, never final).
template <class T>
[[nodiscard]] Result<T> refused_answer(Result<T> decoded) {
  if (!decoded && decoded.error().kind == ErrorKind::invalid)
    decoded.error().kind = ErrorKind::bad_answer;
  return decoded;
}

}  // namespace cn::http
