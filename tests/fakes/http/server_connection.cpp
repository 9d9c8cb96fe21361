#include "tests/fakes/http/server_connection.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstring>

namespace cn::fakes {

namespace {

// httplib refuses a head line longer than its compiled-in CPPHTTPLIB_HEADER_MAX_LENGTH (8192
// bytes with the CRLF) with 400, a request line with 414; Go answers 431 for any head too large,
// so the layer stops such a line first.
constexpr std::size_t kHeadLineLimit = 8190;

bool is_token_char(char c) {
  const auto u = static_cast<unsigned char>(c);
  return std::isalnum(u) || std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

// A header line as Go's textproto accepts it: `name: value`, the name a token, no folding.
bool is_valid_header_line(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (line.empty()) return true;  // the blank line that ends the head
  const std::size_t colon = line.find(':');
  if (colon == std::string_view::npos || colon == 0) return false;
  const std::string_view name = line.substr(0, colon);
  return std::all_of(name.begin(), name.end(), is_token_char);
}

}  // namespace

ServerConnection::ServerConnection(int fd, int stop_fd, HttpServerLimits limits)
    : fd_(fd), stop_fd_(stop_fd), limits_(limits), reader_(fd, stop_fd) {}

bool ServerConnection::is_readable() const {
  if (reader_.buffered()) return true;
  pollfd p{fd_, POLLIN, 0};
  return ::poll(&p, 1, 0) == 1;
}

bool ServerConnection::is_writable() const {
  if (discarding_) return false;
  pollfd fds[2] = {{fd_, POLLOUT, 0}, {stop_fd_, POLLIN, 0}};
  if (::poll(fds, 2, 0) < 0) return false;
  return (fds[0].revents & POLLOUT) && !(fds[0].revents & (POLLERR | POLLHUP)) &&
         !(fds[1].revents & POLLIN);
}

ssize_t ServerConnection::read(char* ptr, size_t size) {
  if (discarding_) return -1;
  std::string got;
  const wire::ReadStatus st = reader_.read_some(size, got);
  if (st == wire::ReadStatus::eof) return 0;
  if (st != wire::ReadStatus::ok) return -1;
  if (in_head_) {
    bool malformed = false;
    for (const char c : got) {
      ++head_bytes_;
      line_bytes_ = c == '\n' ? 0 : line_bytes_ + 1;
      if (!request_line_done_) {
        if (c == '\n') {
          request_line_done_ = true;
          if (!request_line_.empty() && request_line_.back() == '\r') request_line_.pop_back();
        } else if (request_line_.size() < kHeadLineLimit) {
          request_line_ += c;
        }
        continue;
      }
      if (c != '\n') {
        if (header_line_.size() < kHeadLineLimit) header_line_ += c;
        continue;
      }
      malformed = malformed || !is_valid_header_line(header_line_);
      header_line_.clear();
    }
    if (head_bytes_ > limits_.max_header_bytes || line_bytes_ > kHeadLineLimit) {
      answer_and_close(431, "Request Header Fields Too Large", "request head too large");
      return -1;
    }
    if (malformed) {
      answer_and_close(400, "Bad Request", "malformed header line");
      return -1;
    }
  }
  std::memcpy(ptr, got.data(), got.size());
  return static_cast<ssize_t>(got.size());
}

ssize_t ServerConnection::write(const char* ptr, size_t size) {
  if (discarding_) return -1;
  const std::string_view data(ptr, size);
  // httplib writes a status line and its headers in one call.
  if (!dispatched_ && status_written_ == 0 && data.starts_with("HTTP/1.") && data.size() >= 12) {
    int status = 0;
    const auto [end, ec] = std::from_chars(data.data() + 9, data.data() + 12, status);
    if (ec == std::errc{} && status >= 200) status_written_ = status;
  }
  if (!wire::send_all(fd_, data, stop_fd_)) return -1;
  return static_cast<ssize_t>(size);
}

void ServerConnection::get_remote_ip_and_port(std::string& ip, int& port) const {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  ip.clear();
  port = -1;
  if (::getpeername(fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return;
  char text[INET6_ADDRSTRLEN] = {};
  if (addr.ss_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(&addr);
    ::inet_ntop(AF_INET, &in->sin_addr, text, sizeof text);
    port = ntohs(in->sin_port);
  } else if (addr.ss_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&addr);
    ::inet_ntop(AF_INET6, &in6->sin6_addr, text, sizeof text);
    port = ntohs(in6->sin6_port);
  }
  ip = text;
}

void ServerConnection::get_local_ip_and_port(std::string& ip, int& port) const {
  ip.clear();
  port = -1;
}

bool ServerConnection::wait_next_request() {
  return !discarding_ && reader_.await_data() == wire::ReadStatus::ok;
}

void ServerConnection::begin_request() {
  in_head_ = true;
  head_bytes_ = 0;
  line_bytes_ = 0;
  request_line_.clear();
  request_line_done_ = false;
  header_line_.clear();
  dispatched_ = false;
  status_written_ = 0;
}

std::optional<ServerConnection::BodyError> ServerConnection::read_body(const HttpRequest& req,
                                                                       std::string& out) {
  const auto te = req.header("Transfer-Encoding");
  const auto cl = req.header("Content-Length");
  wire::ReadStatus st = wire::ReadStatus::ok;
  if (te) {
    if (!wire::iequals(wire::trim(*te), "chunked") || cl) {
      return BodyError{400, "unsupported transfer encoding"};
    }
    st = reader_.read_chunked(limits_.max_body_bytes, out);
  } else if (cl) {
    std::size_t length = 0;
    const auto [end, ec] = std::from_chars(cl->data(), cl->data() + cl->size(), length);
    if (cl->empty() || ec != std::errc{} || end != cl->data() + cl->size()) {
      return BodyError{400, "bad Content-Length"};
    }
    if (length > limits_.max_body_bytes) return BodyError{413, "request body too large"};
    st = reader_.read_exact(length, out);
  }
  switch (st) {
    case wire::ReadStatus::ok:
      return std::nullopt;
    case wire::ReadStatus::too_large:
      return BodyError{413, "request body too large"};
    case wire::ReadStatus::malformed:
      return BodyError{400, "malformed body"};
    default:
      return BodyError{0, "peer gone or server stopping"};
  }
}

void ServerConnection::answer_and_close(int status, std::string_view reason,
                                        std::string_view message) {
  const std::string body = std::string(message) + "\n";
  const std::string answer =
      "HTTP/1.1 " + std::to_string(status) + " " + std::string(reason) +
      "\r\nContent-Type: text/plain\r\nContent-Length: " + std::to_string(body.size()) +
      "\r\nConnection: close\r\n\r\n" + body;
  wire::send_all(fd_, answer, stop_fd_);
  status_written_ = status;
  discarding_ = true;
}

void ServerConnection::drop() {
  ::shutdown(fd_, SHUT_RDWR);
  discarding_ = true;
}

void ServerConnection::stall() {
  wait_hangup_or_stop(std::chrono::milliseconds(-1));
  drop();
}

bool ServerConnection::wait_hangup_or_stop(std::chrono::milliseconds d) const {
  return wire::wait_hangup_or_cancel(fd_, stop_fd_, d);
}

}  // namespace cn::fakes
