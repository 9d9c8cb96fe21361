#pragma once
// The hand-written part of the fake HTTP server: one accepted socket, seen by cpp-httplib as an
// httplib::Stream. cpp-httplib 0.11.4 parses the head and writes every answer; this layer does
// what it cannot (tests/fakes/README.md, "HTTP server"):
// - every read and write also watches the server's stop descriptor, so stop() never waits for a
//   silent peer (httplib's own stream waits out its read timeout);
// - the head limit answers 431 (httplib answers 400 past its compiled-in 8 KiB line limit), a
//   malformed header line 400 (httplib skips it);
// - request bodies on any method, chunked with extensions and trailers (httplib 0.11.4 reads
//   none on GET and refuses trailers);
// - fault injection: close without an answer, or hold the request unanswered.
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "tests/fakes/http/http_server.h"
#include "tests/fakes/http/http_wire.h"

namespace cn::fakes {

class ServerConnection final : public httplib::Stream {
 public:
  ServerConnection(int fd, int stop_fd, HttpServerLimits limits);

  bool is_readable() const override;
  bool is_writable() const override;
  ssize_t read(char* ptr, size_t size) override;
  ssize_t write(const char* ptr, size_t size) override;
  void get_remote_ip_and_port(std::string& ip, int& port) const override;
  void get_local_ip_and_port(std::string& ip, int& port) const override;
  int socket() const override { return fd_; }

  // Between requests: true once the next request's first byte is here; false when the peer hung
  // up or the server stops. Keep-alive has no idle timeout, like Go's servers by default.
  bool wait_next_request();
  // Starts a request: the head bytes read from now on count against the head limit.
  void begin_request();
  // httplib parsed the head (its setup_request hook).
  void end_head() { in_head_ = false; }
  // The request line as received, for logging a request httplib refused before any handler.
  std::string request_line() const { return request_line_; }

  struct BodyError {
    int status;
    std::string message;
  };
  // Reads the body the headers announce (Content-Length or chunked, any method).
  std::optional<BodyError> read_body(const HttpRequest& req, std::string& out);

  // Answers with a short text body and closes, bypassing httplib.
  void answer_and_close(int status, std::string_view reason, std::string_view message);
  // Closes without answering; whatever httplib writes afterwards is discarded.
  void drop();
  // Holds the request unanswered until the peer hangs up or the server stops, then drops.
  void stall();
  // Waits up to `d` (negative: forever) for a hang-up or the server's stop; true if either came.
  bool wait_hangup_or_stop(std::chrono::milliseconds d) const;

  void close_after_response() { close_after_ = true; }
  bool must_close() const { return close_after_ || discarding_; }
  // A handler ran for the current request (httplib did not answer it by itself).
  void mark_dispatched() { dispatched_ = true; }
  bool dispatched() const { return dispatched_; }
  // The status of the last final (non-1xx) answer written for the current request; 0: none.
  int status_written() const { return status_written_; }

 private:
  int fd_;
  int stop_fd_;
  HttpServerLimits limits_;
  wire::SocketReader reader_;
  bool in_head_ = false;
  std::size_t head_bytes_ = 0;
  std::size_t line_bytes_ = 0;
  std::string request_line_;
  bool request_line_done_ = false;
  std::string header_line_;
  bool close_after_ = false;
  bool discarding_ = false;
  bool dispatched_ = false;
  int status_written_ = 0;
};

}  // namespace cn::fakes
