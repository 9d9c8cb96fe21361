#pragma once
// The HTTP/1.1 server of the fakes (never linked into a shipped binary), on cpp-httplib with a
// small hand-written layer (server_connection.h) for what httplib cannot do. It listens on a Unix
// socket (the Cilium agent) or on 127.0.0.1 TCP (Nomad), one thread per connection, keep-alive,
// Content-Length or chunked request bodies on any method, and lets a handler stream a response
// body (Nomad blocking queries and the event stream) or misbehave on purpose (stall, close
// without an answer) for fault injection.
#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace cn::fakes {

struct CaseInsensitiveLess {
  bool operator()(const std::string& a, const std::string& b) const;
};

struct HttpRequest {
  std::string method;
  std::string target;                             // as sent: path plus ?query
  std::string path;                               // percent-decoded path without the query
  std::string raw_path;                           // path as sent, still percent-encoded
  std::multimap<std::string, std::string> query;  // percent-decoded
  std::map<std::string, std::string, CaseInsensitiveLess> headers;
  std::string body;
  // While the handler runs: true once the client hung up or the server is stopping (Go's request
  // context being cancelled). Empty for requests that did not come from a server.
  std::function<bool()> client_gone;

  std::optional<std::string> query_value(const std::string& key) const;
  std::optional<std::string> header(const std::string& key) const;
};

// Lets a streaming handler write the body after the headers went out.
class StreamWriter {
 public:
  virtual ~StreamWriter() = default;
  // Returns false once the peer is gone (or the server is stopping): the handler should return.
  virtual bool write(const std::string& data) = 0;
  virtual bool stopping() const = 0;
  // Waits up to `d` (real time) for the server to stop or the peer to hang up; returns true when
  // the handler should return. Lets heartbeat loops wait without sleep-and-poll.
  virtual bool wait_stopping(std::chrono::milliseconds d);
};

struct HttpResponse {
  int status = 200;  // the reason phrase is the standard one
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  // When set, the headers are sent (without Content-Length) and then this runs; the body is
  // chunked when `chunked`, else raw until the connection closes (Nomad >= 1.11.3 stream).
  std::function<void(StreamWriter&)> stream;
  bool chunked = false;
  bool close_connection = false;
  // Fault injection: close the socket without writing anything.
  bool drop_without_response = false;
  // Fault injection: keep the connection open and never answer, until the peer hangs up or the
  // server stops (a hung agent).
  bool stall = false;
};

struct LoggedRequest {
  std::chrono::steady_clock::time_point received;
  std::chrono::steady_clock::time_point answered;
  std::string method;
  std::string target;
  int status = 0;    // 0: no response was written (dropped, stalled, peer gone)
  std::string path;  // percent-decoded, without the query
};

struct HttpServerLimits {
  std::size_t max_header_bytes = 64 * 1024;
  std::size_t max_body_bytes = 16 * 1024 * 1024;
};

class HttpServer {
 public:
  using Handler = std::function<HttpResponse(const HttpRequest&)>;

  // Binds now (so a test can connect as soon as this returns); serve() starts accepting.
  // A stale socket file at `path` is replaced. Throws std::system_error when binding fails.
  static std::unique_ptr<HttpServer> unix_socket(const std::string& path, Handler handler,
                                                 HttpServerLimits limits = {});
  // port 0 picks a free port; see port(). Throws std::system_error when binding fails.
  static std::unique_ptr<HttpServer> tcp(const std::string& host, int port, Handler handler,
                                         HttpServerLimits limits = {});

  virtual ~HttpServer() = default;
  virtual void start() = 0;  // accept loop on a background thread
  virtual void stop() = 0;   // closes the listener and every connection, joins all threads
  virtual int port() const = 0;
  virtual std::vector<LoggedRequest> request_log() const = 0;
  virtual void clear_request_log() = 0;
  // Connections whose thread has not finished yet (for tests of stop() and keep-alive).
  virtual int open_connections() const = 0;
  // Total connections accepted since start (keep-alive reuse shows as a small number).
  virtual int accepted_connections() const = 0;
};

}  // namespace cn::fakes
