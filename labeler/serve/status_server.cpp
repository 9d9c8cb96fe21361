#include "labeler/serve/status_server.h"

#include <linux/sockios.h>
#include <netdb.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <climits>
#include <cstdint>
#include <string_view>
#include <vector>

#include "common/util/clock.h"

namespace cn::labeler {
namespace {

// Connections waiting to be accepted; the loop accepts until the queue is empty at every wake.
constexpr int kBacklog = 512;
// Read granularity; also all a connection's lingering input ever costs, since it is discarded.
constexpr std::size_t kReadChunk = 4096;
// While a response waits for its acknowledgement nothing wakes poll(), so it looks this often.
constexpr std::chrono::milliseconds kLingerRecheck{20};

bool iequals(std::string_view a, std::string_view b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                    [](char x, char y) { return (x | 0x20) == (y | 0x20); });
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Where the head ends (just past its blank line), or npos. Bare LF line ends are taken too,
// as HTTP/1.1 allows a recipient to.
std::size_t head_end(const std::string& data, std::size_t from) {
  for (std::size_t at = data.find('\n', from); at != std::string::npos;
       at = data.find('\n', at + 1)) {
    if (at + 1 < data.size() && data[at + 1] == '\n') return at + 2;
    if (at + 2 < data.size() && data[at + 1] == '\r' && data[at + 2] == '\n') return at + 3;
  }
  return std::string::npos;
}

std::string_view reason_phrase(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 400:
      return "Bad Request";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 413:
      return "Content Too Large";
    case 431:
      return "Request Header Fields Too Large";
    case 503:
      return "Service Unavailable";
    default:
      return "Error";
  }
}

// Every response closes its connection: one request per connection needs no keep-alive state.
std::string response(int status, std::string_view content_type, const std::string& body,
                     bool head_only, std::string_view extra_headers = {}) {
  std::string out = "HTTP/1.1 " + std::to_string(status) + " ";
  out += reason_phrase(status);
  out += "\r\nContent-Type: ";
  out += content_type;
  out += "\r\nContent-Length: " + std::to_string(body.size());
  out += "\r\n";
  out += extra_headers;
  out += "Connection: close\r\n\r\n";
  if (!head_only) out += body;
  return out;
}

std::string error_response(int status, const std::string& why, bool head_only = false,
                           std::string_view extra = {}) {
  return response(status, "text/plain; charset=utf-8", why + "\n", head_only, extra);
}

}  // namespace

enum class Phase {
  reading,    // the head has not fully arrived
  writing,    // the response is being sent
  lingering,  // sent and shut down for writing; closed once the peer has acknowledged it
};

struct StatusServer::Connection {
  int fd = -1;
  Phase phase = Phase::reading;
  MonoTime deadline;
  std::string data;  // the head so far, then the response
  std::size_t sent = 0;
};

StatusServer::StatusServer(Metrics& metrics, Readiness readiness, StatusServerLimits limits)
    : metrics_(metrics), readiness_(std::move(readiness)), limits_(limits) {}

StatusServer::~StatusServer() {
  stop();
}

Status StatusServer::start(const std::string& address) {
  auto colon = address.rfind(':');
  if (colon == std::string::npos) return fail("--metrics-addr must be HOST:PORT, got " + address);
  std::string host = address.substr(0, colon);
  const std::string port_text = address.substr(colon + 1);
  int port = -1;
  auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (ec != std::errc{} || end != port_text.data() + port_text.size() || port < 0 || port > 65535)
    return fail("--metrics-addr has no valid port: " + address);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);

  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  if (::getaddrinfo(host.empty() ? nullptr : host.c_str(), port_text.c_str(), &hints, &found) !=
      0) {
    port_ = -1;
    return fail("metrics address " + address + " is not available (host not resolvable)");
  }
  int err = 0;
  for (addrinfo* ai = found; ai != nullptr && listen_fd_ < 0; ai = ai->ai_next) {
    int fd =
        ::socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) {
      err = errno;
      continue;
    }
    // SO_REUSEADDR only, for a restart while old connections sit in TIME_WAIT. Never
    // SO_REUSEPORT: a second labeler must fail here, not share the port and the probes.
    int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && ::listen(fd, kBacklog) == 0) {
      listen_fd_ = fd;
    } else {
      err = errno;
      ::close(fd);
    }
  }
  ::freeaddrinfo(found);
  if (listen_fd_ < 0) {
    port_ = -1;
    return fail("metrics address " + address + " is not available (" + errno_text(err) + ")");
  }
  sockaddr_storage bound{};
  socklen_t len = sizeof bound;
  ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&bound), &len);
  port_ = ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                            : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd_ < 0) {
    err = errno;
    ::close(listen_fd_);
    listen_fd_ = -1;
    return fail("metrics server: eventfd (" + errno_text(err) + ")");
  }
  thread_ = std::thread([this] { serve(); });
  return {};
}

void StatusServer::stop() {
  if (wake_fd_ >= 0) {
    std::uint64_t one = 1;
    (void)!::write(wake_fd_, &one, sizeof one);
  }
  if (thread_.joinable()) thread_.join();
  for (int* fd : {&listen_fd_, &wake_fd_}) {
    if (*fd >= 0) ::close(*fd);
    *fd = -1;
  }
}

// One poll loop with its accept, read, answer and expiry steps inline: splitting it would spread
// each connection's state over several functions.
// NOLINTNEXTLINE(readability-function-cognitive-complexity)
void StatusServer::serve() {
  std::vector<Connection> conns;  // in accept order: the first reading one is the oldest
  std::vector<pollfd> fds;
  std::array<char, kReadChunk> chunk{};
  auto close_conn = [](Connection& c) {
    ::close(c.fd);
    c.fd = -1;
  };
  auto now = [] { return system_clock().now(); };
  auto finish_writing = [&](Connection& c) {
    while (c.sent < c.data.size()) {
      ssize_t n = ::send(c.fd, c.data.data() + c.sent, c.data.size() - c.sent, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
      if (n <= 0) return close_conn(c);
      c.sent += static_cast<std::size_t>(n);
    }
    // A close() while unread input (a body we refused) waits would reset the connection and
    // could drop the response still in flight, so the connection stays until it is acknowledged.
    ::shutdown(c.fd, SHUT_WR);
    std::string().swap(c.data);
    c.phase = Phase::lingering;
    c.deadline = now() + limits_.write_timeout;
  };
  // Discards what the peer still sends; closes once it hung up or acknowledged the response.
  auto linger = [&](Connection& c) {
    for (std::size_t drained = 0; drained < 16 * kReadChunk; drained += chunk.size()) {
      ssize_t n = ::recv(c.fd, chunk.data(), chunk.size(), MSG_DONTWAIT);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
      if (n <= 0) return close_conn(c);
    }
    int unacked = 0;
    if (::ioctl(c.fd, SIOCOUTQ, &unacked) != 0 || unacked == 0) close_conn(c);
  };
  auto read_head = [&](Connection& c) {
    ssize_t n = ::recv(c.fd, chunk.data(), chunk.size(), MSG_DONTWAIT);
    if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) return;
    if (n <= 0) return close_conn(c);
    const std::size_t before = c.data.size();
    c.data.append(chunk.data(), static_cast<std::size_t>(n));
    std::size_t end = head_end(c.data, before > 2 ? before - 2 : 0);
    if (end != std::string::npos && end <= limits_.max_head_bytes) {
      c.data = respond(c.data.substr(0, end));
    } else if (c.data.size() >= limits_.max_head_bytes) {
      c.data = error_response(431, "request line and headers exceed " +
                                       std::to_string(limits_.max_head_bytes) + " bytes");
    } else {
      return;
    }
    c.phase = Phase::writing;
    c.sent = 0;
    c.deadline = now() + limits_.write_timeout;
    finish_writing(c);
    if (c.fd >= 0 && c.phase == Phase::lingering) linger(c);
  };

  for (;;) {
    fds.clear();
    fds.push_back({wake_fd_, POLLIN, 0});
    fds.push_back({listen_fd_, POLLIN, 0});
    MonoTime next = MonoTime::max();
    for (const auto& c : conns) {
      fds.push_back({c.fd, static_cast<short>(c.phase == Phase::writing ? POLLOUT : POLLIN), 0});
      next = std::min(next, c.phase == Phase::lingering ? now() + kLingerRecheck : c.deadline);
    }
    int timeout_ms = -1;
    if (!conns.empty()) {
      auto left = std::chrono::ceil<std::chrono::milliseconds>(next - now()).count();
      timeout_ms = static_cast<int>(std::clamp<long long>(left, 0, INT_MAX));
    }
    if (::poll(fds.data(), fds.size(), timeout_ms) < 0 && errno != EINTR) break;
    if (fds[0].revents != 0) break;

    for (std::size_t i = 0; i < conns.size(); ++i) {
      Connection& c = conns[i];
      const short revents = fds[i + 2].revents;
      if (c.phase == Phase::lingering) {
        linger(c);  // also when nothing woke it: the acknowledgement makes no event
      } else if (revents != 0) {
        if (c.phase == Phase::reading) {
          read_head(c);
        } else {
          finish_writing(c);
          if (c.fd >= 0 && c.phase == Phase::lingering) linger(c);
        }
      }
      if (c.fd >= 0 && c.deadline <= now()) close_conn(c);
    }
    std::erase_if(conns, [](const Connection& c) { return c.fd < 0; });

    if ((fds[1].revents & POLLIN) == 0) continue;
    for (;;) {
      int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) break;  // EAGAIN: the queue is empty; anything else: try at the next wake
      if (conns.size() >= limits_.max_connections) {
        auto oldest = std::find_if(conns.begin(), conns.end(),
                                   [](const Connection& c) { return c.phase == Phase::reading; });
        if (oldest == conns.end()) {
          ::close(fd);  // every slot is answering a request: the newcomer retries
          continue;
        }
        ::close(oldest->fd);
        conns.erase(oldest);
      }
      conns.push_back(Connection{fd, Phase::reading, now() + limits_.head_timeout, {}, 0});
      // A probe writes its request with the connect, so it is usually there already.
      read_head(conns.back());
      if (conns.back().fd < 0) conns.pop_back();
    }
  }
  for (auto& c : conns) ::close(c.fd);
}

std::string StatusServer::respond(const std::string& head) {
  std::string_view rest = head;
  auto next_line = [&rest] {
    auto nl = rest.find('\n');
    std::string_view line = rest.substr(0, nl);
    rest.remove_prefix(nl == std::string_view::npos ? rest.size() : nl + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    return line;
  };
  const std::string_view request_line = next_line();
  const auto sp1 = request_line.find(' ');
  const auto sp2 = sp1 == std::string_view::npos ? sp1 : request_line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos || request_line.find(' ', sp2 + 1) != std::string_view::npos)
    return error_response(400, "malformed request line");
  const std::string_view method = request_line.substr(0, sp1);
  const std::string_view target = request_line.substr(sp1 + 1, sp2 - sp1 - 1);
  const std::string_view version = request_line.substr(sp2 + 1);
  if (version != "HTTP/1.1" && version != "HTTP/1.0")
    return error_response(400, "only HTTP/1.0 and HTTP/1.1 are served");
  const bool head_only = method == "HEAD";
  // Answered as soon as the head is in: the body, however long, is never read.
  if (method != "GET" && !head_only)
    return error_response(405, "only GET and HEAD are served", false, "Allow: GET, HEAD\r\n");
  for (std::string_view line = next_line(); !line.empty(); line = next_line()) {
    const auto colon = line.find(':');
    if (colon == std::string_view::npos || colon == 0 ||
        line.substr(0, colon).find_first_of(" \t") != std::string_view::npos)
      return error_response(400, "malformed header line", head_only);
    const std::string_view name = line.substr(0, colon);
    const std::string_view value = trim(line.substr(colon + 1));
    if (iequals(name, "Transfer-Encoding"))
      return error_response(400, "GET and HEAD take no body", head_only);
    if (iequals(name, "Content-Length")) {
      if (value.empty() || value.find_first_not_of("0123456789") != std::string_view::npos)
        return error_response(400, "malformed Content-Length", head_only);
      if (value.find_first_not_of('0') != std::string_view::npos)
        return error_response(413, "GET and HEAD take no body", head_only);
    }
  }
  const std::string_view path = target.substr(0, target.find('?'));
  if (path == "/metrics") {
    metrics_.ready().Set(readiness_().first ? 1 : 0);
    return response(200, "text/plain; version=0.0.4; charset=utf-8", metrics_.render(), head_only);
  }
  if (path == "/healthz") {
    auto [ok, reason] = readiness_();
    std::string body = ok ? "ok\n" : "not ready: " + reason + "\n";
    if (detail_) body += detail_();
    return response(ok ? 200 : 503, "text/plain; charset=utf-8", body, head_only);
  }
  return response(404, "text/plain; charset=utf-8", "not found\n", head_only);
}

}  // namespace cn::labeler
