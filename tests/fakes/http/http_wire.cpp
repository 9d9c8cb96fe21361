#include "tests/fakes/http/http_wire.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>

namespace cn::fakes::wire {

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

SocketReader::SocketReader(int fd, int cancel_fd, std::chrono::milliseconds timeout)
    : fd_(fd), cancel_fd_(cancel_fd), timeout_(timeout) {}

ReadStatus SocketReader::fill() {
  const int wait_ms = timeout_.count() > 0 ? static_cast<int>(timeout_.count()) : -1;
  for (;;) {
    pollfd fds[2] = {{fd_, POLLIN, 0}, {cancel_fd_, POLLIN, 0}};
    const nfds_t n = cancel_fd_ >= 0 ? 2 : 1;
    const int rc = ::poll(fds, n, wait_ms);
    if (rc < 0) {
      if (errno == EINTR) continue;
      return ReadStatus::error;
    }
    if (rc == 0) return ReadStatus::timeout;
    if (n == 2 && (fds[1].revents & POLLIN)) return ReadStatus::cancelled;
    char chunk[16 * 1024];
    const ssize_t got = ::recv(fd_, chunk, sizeof chunk, MSG_DONTWAIT);
    if (got < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) continue;
    if (got < 0) return errno == ECONNRESET ? ReadStatus::eof : ReadStatus::error;
    if (got == 0) return ReadStatus::eof;
    buf_.append(chunk, static_cast<std::size_t>(got));
    return ReadStatus::ok;
  }
}

ReadStatus SocketReader::read_until(std::string_view delim, std::size_t max, std::string& out) {
  std::size_t scanned = 0;
  for (;;) {
    const std::size_t from = scanned >= delim.size() ? scanned - delim.size() + 1 : 0;
    const std::size_t pos = buf_.find(delim, from);
    if (pos != std::string::npos) {
      if (pos > max) return ReadStatus::too_large;
      out.assign(buf_, 0, pos);
      buf_.erase(0, pos + delim.size());
      return ReadStatus::ok;
    }
    if (buf_.size() > max + delim.size()) return ReadStatus::too_large;
    scanned = buf_.size();
    if (const ReadStatus st = fill(); st != ReadStatus::ok) return st;
  }
}

ReadStatus SocketReader::read_exact(std::size_t n, std::string& out) {
  while (buf_.size() < n) {
    if (const ReadStatus st = fill(); st != ReadStatus::ok) {
      return st == ReadStatus::eof ? ReadStatus::malformed : st;
    }
  }
  out.assign(buf_, 0, n);
  buf_.erase(0, n);
  return ReadStatus::ok;
}

ReadStatus SocketReader::read_some(std::size_t max, std::string& out) {
  if (buf_.empty()) {
    if (const ReadStatus st = fill(); st != ReadStatus::ok) return st;
  }
  const std::size_t n = std::min(max, buf_.size());
  out.assign(buf_, 0, n);
  buf_.erase(0, n);
  return ReadStatus::ok;
}

ReadStatus SocketReader::read_to_eof(std::size_t max, std::string& out) {
  for (;;) {
    if (buf_.size() > max) return ReadStatus::too_large;
    const ReadStatus st = fill();
    if (st == ReadStatus::eof) break;
    if (st != ReadStatus::ok) return st;
  }
  out = std::move(buf_);
  buf_.clear();
  return ReadStatus::ok;
}

ReadStatus SocketReader::read_chunked(std::size_t max, std::string& out) {
  out.clear();
  for (;;) {
    std::string line;
    if (const ReadStatus st = read_until("\r\n", 1024, line); st != ReadStatus::ok) {
      return st == ReadStatus::eof || st == ReadStatus::too_large ? ReadStatus::malformed : st;
    }
    // Chunk extensions (";name=value") are legal and meaningless here.
    std::string_view size_text = trim(std::string_view(line).substr(0, line.find(';')));
    std::size_t size = 0;
    const auto [end, ec] =
        std::from_chars(size_text.data(), size_text.data() + size_text.size(), size, 16);
    if (size_text.empty() || ec != std::errc{} || end != size_text.data() + size_text.size()) {
      return ReadStatus::malformed;
    }
    if (size == 0) break;
    if (out.size() + size > max) return ReadStatus::too_large;
    std::string data;
    if (const ReadStatus st = read_exact(size, data); st != ReadStatus::ok) return st;
    out += data;
    std::string crlf;
    if (const ReadStatus st = read_exact(2, crlf); st != ReadStatus::ok) return st;
    if (crlf != "\r\n") return ReadStatus::malformed;
  }
  for (;;) {  // trailer section ends with an empty line
    std::string trailer;
    if (const ReadStatus st = read_until("\r\n", 8 * 1024, trailer); st != ReadStatus::ok) {
      return st == ReadStatus::eof ? ReadStatus::malformed : st;
    }
    if (trailer.empty()) return ReadStatus::ok;
  }
}

bool send_all(int fd, std::string_view data, int cancel_fd) {
  while (!data.empty()) {
    pollfd fds[2] = {{fd, POLLOUT, 0}, {cancel_fd, POLLIN, 0}};
    const nfds_t n = cancel_fd >= 0 ? 2 : 1;
    const int rc = ::poll(fds, n, -1);
    if (rc < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    if (n == 2 && (fds[1].revents & POLLIN)) return false;
    if (fds[0].revents & (POLLERR | POLLHUP | POLLNVAL)) return false;
    const ssize_t sent = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (sent < 0) {
      if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) continue;
      return false;
    }
    data.remove_prefix(static_cast<std::size_t>(sent));
  }
  return true;
}

bool wait_hangup_or_cancel(int fd, int cancel_fd, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    int wait_ms = -1;
    if (timeout.count() >= 0) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      // A zero timeout still looks once: "has the peer hung up by now?"
      wait_ms = static_cast<int>(std::max<long long>(left.count(), 0));
    }
    // POLLRDHUP only: pipelined request bytes must not count as a hang-up.
    pollfd fds[2] = {{fd, POLLRDHUP, 0}, {cancel_fd, POLLIN, 0}};
    const nfds_t n = cancel_fd >= 0 ? 2 : 1;
    const int rc = ::poll(fds, n, wait_ms);
    if (rc < 0) {
      if (errno == EINTR) continue;
      return true;
    }
    if (rc == 0) return false;
    return true;
  }
}

namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::optional<std::string> percent_decode(std::string_view s, bool plus_is_space) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '%') {
      if (i + 2 >= s.size()) return std::nullopt;
      const int hi = hex_value(s[i + 1]);
      const int lo = hex_value(s[i + 2]);
      if (hi < 0 || lo < 0) return std::nullopt;
      out.push_back(static_cast<char>(hi * 16 + lo));
      i += 2;
    } else if (c == '+' && plus_is_space) {
      out.push_back(' ');
    } else {
      out.push_back(c);
    }
  }
  return out;
}

namespace {

bool is_token_char(char c) {
  const auto u = static_cast<unsigned char>(c);
  return std::isalnum(u) || std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

// Splits "a\r\nb\r\n" lines; a bare LF is tolerated as a line end (curl never sends one, but
// a hand-typed `nc` session might).
std::vector<std::string_view> split_lines(std::string_view head) {
  std::vector<std::string_view> lines;
  while (!head.empty()) {
    const std::size_t lf = head.find('\n');
    std::string_view line = head.substr(0, lf);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    if (lf == std::string_view::npos) break;
    head.remove_prefix(lf + 1);
  }
  return lines;
}

template <class Map>
std::optional<std::string> parse_header_lines(const std::vector<std::string_view>& lines,
                                              Map& put) {
  for (std::size_t i = 1; i < lines.size(); ++i) {
    const std::string_view line = lines[i];
    if (line.empty()) continue;
    if (line.front() == ' ' || line.front() == '\t') return "obsolete header folding";
    const std::size_t colon = line.find(':');
    if (colon == std::string_view::npos || colon == 0) return "header without a name";
    const std::string_view name = line.substr(0, colon);
    if (!std::all_of(name.begin(), name.end(), is_token_char)) return "bad header name";
    put(std::string(name), std::string(trim(line.substr(colon + 1))));
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> parse_target(HttpRequest& req) {
  if (req.target.empty() || req.target.front() != '/') return "target must be an absolute path";
  for (const char c : req.target) {
    if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f) return "control byte in target";
  }
  const std::size_t q = req.target.find('?');
  req.raw_path = req.target.substr(0, q);
  auto path = percent_decode(req.raw_path, false);
  if (!path) return "bad percent-encoding in path";
  req.path = std::move(*path);
  req.query.clear();
  if (q == std::string::npos) return std::nullopt;
  std::string_view rest = std::string_view(req.target).substr(q + 1);
  const std::size_t hash = rest.find('#');
  if (hash != std::string_view::npos) rest = rest.substr(0, hash);
  while (!rest.empty()) {
    const std::size_t amp = rest.find('&');
    const std::string_view pair = rest.substr(0, amp);
    if (!pair.empty()) {
      const std::size_t eq = pair.find('=');
      auto key = percent_decode(pair.substr(0, eq), true);
      auto value = percent_decode(
          eq == std::string_view::npos ? std::string_view{} : pair.substr(eq + 1), true);
      if (!key || !value) return "bad percent-encoding in query";
      req.query.emplace(std::move(*key), std::move(*value));
    }
    if (amp == std::string_view::npos) break;
    rest.remove_prefix(amp + 1);
  }
  return std::nullopt;
}

std::optional<std::string> ResponseHead::header(std::string_view name) const {
  for (const auto& [k, v] : headers) {
    if (iequals(k, name)) return v;
  }
  return std::nullopt;
}

std::optional<std::string> parse_response_head(std::string_view head, ResponseHead& out) {
  const auto lines = split_lines(head);
  if (lines.empty()) return "empty status line";
  const std::string_view line = lines[0];
  if (!line.starts_with("HTTP/1.")) return "not an HTTP/1.x status line";
  const std::size_t sp1 = line.find(' ');
  if (sp1 == std::string_view::npos || line.size() < sp1 + 4) return "malformed status line";
  const std::string_view code = line.substr(sp1 + 1, 3);
  const auto [end, ec] = std::from_chars(code.data(), code.data() + 3, out.status);
  if (ec != std::errc{} || end != code.data() + 3) return "bad status code";
  out.reason = line.size() > sp1 + 5 ? std::string(line.substr(sp1 + 5)) : std::string();
  out.headers.clear();
  auto put = [&out](std::string name, std::string value) {
    out.headers.emplace_back(std::move(name), std::move(value));
  };
  return parse_header_lines(lines, put);
}

}  // namespace cn::fakes::wire
