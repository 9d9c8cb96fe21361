#pragma once
// A thread-safe HTTP/1.1 client over libcurl (hidden behind a pimpl: no curl type in this
// header). Several worker threads may call send() at once; each call borrows a connection from a
// small pool, so a 5-minute Nomad blocking query never holds up a Cilium PATCH or another
// Nomad call, and idle connections are reused (keep-alive) instead of reconnecting each time.
//
// Proxies: libcurl honours http_proxy/https_proxy/all_proxy from the environment. Every
// request here goes to a node-local agent (Nomad client, Cilium socket), so a node-wide proxy
// setting must never hijack it: proxies are switched off for every host (CURLOPT_NOPROXY "*").
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <stop_token>
#include <string>
#include <string_view>

#include <spdlog/fwd.h>

#include "common/http/headers.h"
#include "common/http/http_target.h"
#include "common/http/http_types.h"
#include "common/util/clock.h"

namespace cn::http {

struct TlsOptions {
  std::string ca_file;      // PEM bundle of trusted CAs; empty: the system store
  std::string ca_path;      // directory of c_rehash'ed CA certificates
  std::string client_cert;  // PEM client certificate (mutual TLS)
  std::string client_key;   // PEM key for client_cert
  // Verify the certificate (and send SNI) for this name instead of the URL's host, e.g.
  // "client.global.nomad" while connecting to 127.0.0.1. Implemented by addressing the URL to
  // this name and pinning the TCP connection to the real host (CURLOPT_CONNECT_TO); the Host
  // header keeps the real address, as Go's tls.Config.ServerName does.
  std::string server_name;
  // Accept any certificate. Only ever set by an explicit operator choice (NOMAD_SKIP_VERIFY).
  bool skip_verify = false;
};

struct HttpClientConfig {
  HttpTarget target = HttpTarget::unix_socket("/dev/null");
  TlsOptions tls;
  // Sent with every request. Values are never logged nor put in error messages, which makes
  // this the place for credentials (X-Nomad-Token).
  Headers default_headers;
  std::chrono::milliseconds connect_timeout{5'000};
  std::chrono::milliseconds default_timeout{30'000};
  std::size_t max_body_bytes =
      std::size_t{64} * 1024 * 1024;  // a node's full allocations, with margin
  std::size_t max_idle_connections = 4;
  std::string user_agent = "cilium-nomad";
  std::shared_ptr<spdlog::logger> log;  // nullptr: spdlog's default logger
  Clock* clock = nullptr;               // times each exchange for its log line; nullptr: system
};

struct StreamOptions {
  // Fails the stream when no byte (headers or body) arrives for this long. 0: no limit.
  std::chrono::milliseconds idle_timeout{0};
  // A non-2xx answer's body is kept (not passed to on_data) up to this size, for the error.
  std::size_t max_error_body = 4096;
};

enum class StreamEnd {
  eof,       // the server ended the body (chunked terminator or close)
  callback,  // on_data returned false
  stopped,   // the stop_token was triggered
};

struct StreamResult {
  int status = 0;
  Headers headers;
  StreamEnd end = StreamEnd::eof;
  std::string error_body;  // body of a non-2xx answer (on_data is only called for 2xx)
};

class HttpClient {
 public:
  explicit HttpClient(HttpClientConfig config);
  ~HttpClient();
  HttpClient(HttpClient&&) noexcept;
  HttpClient& operator=(HttpClient&&) noexcept;
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // One exchange, no retry (see retry.h). Any HTTP status is a Response.
  [[nodiscard]] HttpResult<Response> send(const Request& request, std::stop_token stop = {});

  // A long-lived response: on_data gets the body bytes as they arrive (any split) while the
  // status is 2xx. Chunked and read-until-close bodies both work. Ends on EOF, when on_data
  // returns false, on `stop`, or fails after options.idle_timeout without a byte.
  [[nodiscard]] HttpResult<StreamResult> stream(
      const Request& request, const std::function<bool(std::string_view)>& on_data,
      const StreamOptions& options, std::stop_token stop);

  const HttpTarget& target() const;
  // Connections accepted into the idle pool so far and currently idle (for tests).
  std::size_t idle_connections() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace cn::http
