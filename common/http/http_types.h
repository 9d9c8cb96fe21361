#pragma once
// Requests, responses and transport failures of the HTTP layer. An HTTP status is never a
// failure here: the API clients decide what a 404 or a 429 means. A failure is "no usable
// HTTP answer" (refused, timed out, TLS, aborted), classified so that retry logic can tell a
// connection problem (worth retrying) from one that will not go away (TLS, bad URL).
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

enum class FailureKind {
  connect,    // refused, reset, closed before/while answering: the server may do better later
  timeout,    // total timeout or stream idle timeout
  tls,        // handshake or certificate verification: retrying cannot help
  aborted,    // the caller stopped the transfer (stop_token or callback)
  too_large,  // response body over the client's limit
  other,      // bad URL, protocol violation, out of memory
};
std::string_view to_string(FailureKind k);

struct HttpFailure {
  FailureKind kind = FailureKind::other;
  std::string message;  // never contains header values (tokens)
};

template <class T>
using HttpResult = std::expected<T, HttpFailure>;

// The module-boundary form: transport failures carry code 0 (cilium_api.h, nomad_api.h).
inline Error to_error(const HttpFailure& f) { return Error{f.message, 0}; }

}  // namespace cn::http
