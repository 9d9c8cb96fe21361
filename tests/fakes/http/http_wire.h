#pragma once
// HTTP/1.1 wire helpers shared by the fake server's hand-written layer and the raw test client:
// a cancellable buffered socket reader, chunked bodies, target and response-head parsing and
// percent-decoding.
#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tests/fakes/http/http_server.h"

namespace cn::fakes::wire {

enum class ReadStatus { ok, eof, too_large, malformed, cancelled, timeout, error };

// Reads from a socket through a buffer. Every wait also watches `cancel_fd` (readable means
// "give up"), so a server stop never waits for a silent peer.
class SocketReader {
 public:
  SocketReader(int fd, int cancel_fd, std::chrono::milliseconds timeout = {});

  // Returns the bytes before `delim` and consumes them plus the delimiter.
  ReadStatus read_until(std::string_view delim, std::size_t max, std::string& out);
  ReadStatus read_exact(std::size_t n, std::string& out);
  // Returns ok once at least one byte is buffered (eof, cancelled... otherwise).
  ReadStatus await_data() { return buf_.empty() ? fill() : ReadStatus::ok; }
  // Whatever is buffered (up to `max` bytes), or what one read from the socket brings.
  ReadStatus read_some(std::size_t max, std::string& out);
  ReadStatus read_to_eof(std::size_t max, std::string& out);
  // A chunked body (RFC 9112 7.1); trailers are read and dropped.
  ReadStatus read_chunked(std::size_t max, std::string& out);
  bool buffered() const { return !buf_.empty(); }
  // Lets a client keep bytes read past one response for the next one.
  void seed(std::string bytes) { buf_ = std::move(bytes) + buf_; }
  std::string take_buffer() { return std::exchange(buf_, {}); }

 private:
  ReadStatus fill();

  int fd_;
  int cancel_fd_;
  std::chrono::milliseconds timeout_;
  std::string buf_;
};

// Writes everything or fails (peer gone, cancelled). Never raises SIGPIPE.
bool send_all(int fd, std::string_view data, int cancel_fd);

// Waits until `fd` reports a hang-up, `cancel_fd` becomes readable, or `timeout` passes
// (negative: forever). Returns true on hang-up or cancel.
bool wait_hangup_or_cancel(int fd, int cancel_fd, std::chrono::milliseconds timeout);

std::optional<std::string> percent_decode(std::string_view s, bool plus_is_space);

// Splits req.target into raw_path (still percent-encoded), path and query (both decoded; `+` is
// a space in the query only). Returns an error message for a target a Go server refuses.
std::optional<std::string> parse_target(HttpRequest& req);

struct ResponseHead {
  int status = 0;
  std::string reason;
  std::vector<std::pair<std::string, std::string>> headers;
  std::optional<std::string> header(std::string_view name) const;
};
std::optional<std::string> parse_response_head(std::string_view head, ResponseHead& out);

bool iequals(std::string_view a, std::string_view b);
std::string_view trim(std::string_view s);

}  // namespace cn::fakes::wire
