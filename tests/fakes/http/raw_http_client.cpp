#include "tests/fakes/http/raw_http_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>

#include "tests/fakes/http/http_wire.h"

namespace cn::fakes {

namespace {
constexpr std::size_t kMaxResponse = 64 * 1024 * 1024;

std::string describe(wire::ReadStatus st) {
  switch (st) {
    case wire::ReadStatus::ok:
      return "ok";
    case wire::ReadStatus::eof:
      return "connection closed before a complete response";
    case wire::ReadStatus::too_large:
      return "response too large";
    case wire::ReadStatus::malformed:
      return "malformed response";
    case wire::ReadStatus::cancelled:
      return "cancelled";
    case wire::ReadStatus::timeout:
      return "timed out waiting for the response";
    case wire::ReadStatus::error:
      return std::string("read error: ") + std::strerror(errno);
  }
  return "unknown";
}

// connect() with a deadline: a full listen backlog of a stalled fake must not hang a test.
bool connect_with_timeout(int fd, const sockaddr* addr, socklen_t len,
                          std::chrono::milliseconds timeout) {
  if (::connect(fd, addr, len) == 0) return true;
  if (errno != EINPROGRESS && errno != EAGAIN) return false;
  pollfd p{fd, POLLOUT, 0};
  if (::poll(&p, 1, static_cast<int>(timeout.count())) != 1) {
    errno = ETIMEDOUT;
    return false;
  }
  int err = 0;
  socklen_t elen = sizeof err;
  ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen);
  errno = err;
  return err == 0;
}
}  // namespace

std::optional<std::string> RawHttpResponse::header(std::string_view name) const {
  for (const auto& [k, v] : headers) {
    if (wire::iequals(k, name)) return v;
  }
  return std::nullopt;
}

Result<RawConnection> RawConnection::open(const HttpTarget& target,
                                          std::chrono::milliseconds timeout) {
  int fd = -1;
  bool ok = false;
  std::string where;
  if (!target.unix_path.empty()) {
    where = target.unix_path;
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (target.unix_path.size() >= sizeof addr.sun_path) return fail("socket path too long");
    std::memcpy(addr.sun_path, target.unix_path.c_str(), target.unix_path.size() + 1);
    fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd >= 0)
      ok = connect_with_timeout(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr, timeout);
  } else {
    where = target.host + ":" + std::to_string(target.port);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<std::uint16_t>(target.port));
    if (::inet_pton(AF_INET, target.host.c_str(), &addr.sin_addr) != 1) {
      return fail("bad IPv4 address " + target.host);
    }
    fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd >= 0)
      ok = connect_with_timeout(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr, timeout);
  }
  if (!ok) {
    const int err = errno;
    if (fd >= 0) ::close(fd);
    return fail_errno("connect " + where + ": " + std::strerror(err), err);
  }
  return RawConnection(fd, timeout);
}

RawConnection::RawConnection(RawConnection&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      timeout_(other.timeout_),
      pending_(std::move(other.pending_)) {}

RawConnection& RawConnection::operator=(RawConnection&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    timeout_ = other.timeout_;
    pending_ = std::move(other.pending_);
  }
  return *this;
}

RawConnection::~RawConnection() {
  if (fd_ >= 0) ::close(fd_);
}

bool RawConnection::send(std::string_view bytes) {
  return wire::send_all(fd_, bytes, -1);
}

void RawConnection::shutdown_write() {
  ::shutdown(fd_, SHUT_WR);
}

bool RawConnection::peer_closed(std::chrono::milliseconds wait) {
  pollfd p{fd_, POLLIN, 0};
  if (::poll(&p, 1, static_cast<int>(wait.count())) != 1) return false;
  char c;
  const ssize_t got = ::recv(fd_, &c, 1, MSG_PEEK);
  return got == 0 || (got < 0 && errno != EAGAIN);
}

Result<RawHttpResponse> RawConnection::read_response() {
  wire::SocketReader reader(fd_, -1, timeout_);
  reader.seed(std::move(pending_));
  pending_.clear();
  RawHttpResponse resp;
  for (;;) {  // skip interim 1xx responses
    std::string head;
    if (const auto st = reader.read_until("\r\n\r\n", 64 * 1024, head);
        st != wire::ReadStatus::ok) {
      return fail(describe(st));
    }
    wire::ResponseHead parsed;
    if (const auto err = wire::parse_response_head(head, parsed)) return fail(*err);
    if (parsed.status >= 100 && parsed.status < 200) continue;
    resp.status = parsed.status;
    resp.reason = parsed.reason;
    resp.headers = std::move(parsed.headers);
    break;
  }
  wire::ReadStatus st = wire::ReadStatus::ok;
  const auto te = resp.header("Transfer-Encoding");
  const auto cl = resp.header("Content-Length");
  if (te && wire::iequals(wire::trim(*te), "chunked")) {
    st = reader.read_chunked(kMaxResponse, resp.body);
  } else if (cl) {
    std::size_t n = 0;
    const auto [end, ec] = std::from_chars(cl->data(), cl->data() + cl->size(), n);
    if (ec != std::errc{} || end != cl->data() + cl->size()) return fail("bad Content-Length");
    st = reader.read_exact(n, resp.body);
  } else if (resp.status != 204 && resp.status != 304) {
    st = reader.read_to_eof(kMaxResponse, resp.body);
  }
  if (st != wire::ReadStatus::ok) return fail(describe(st));
  pending_ = reader.take_buffer();
  return resp;
}

Result<RawHttpResponse> RawConnection::request(
    std::string_view method, std::string_view target, std::string_view body,
    const std::vector<std::pair<std::string, std::string>>& headers) {
  if (!send(format_request(method, target, body, headers))) {
    return fail(std::string("send failed: ") + std::strerror(errno));
  }
  return read_response();
}

std::string format_request(std::string_view method, std::string_view target, std::string_view body,
                           const std::vector<std::pair<std::string, std::string>>& headers) {
  std::string out;
  out.append(method).append(" ").append(target).append(" HTTP/1.1\r\n");
  bool has_host = false, has_type = false;
  for (const auto& [k, v] : headers) {
    if (wire::iequals(k, "Host")) has_host = true;
    if (wire::iequals(k, "Content-Type")) has_type = true;
    out += k + ": " + v + "\r\n";
  }
  // Go clients always send "localhost" on a unix socket; so do we.
  if (!has_host) out += "Host: localhost\r\n";
  if (!body.empty()) {
    if (!has_type) out += "Content-Type: application/json\r\n";
    out += "Content-Length: " + std::to_string(body.size()) + "\r\n";
  } else if (method == "PUT" || method == "POST" || method == "PATCH") {
    out += "Content-Length: 0\r\n";
  }
  out += "\r\n";
  out.append(body);
  return out;
}

Result<RawHttpResponse> http_request(
    const HttpTarget& target, std::string_view method, std::string_view path, std::string_view body,
    const std::vector<std::pair<std::string, std::string>>& headers,
    std::chrono::milliseconds timeout) {
  auto conn = RawConnection::open(target, timeout);
  if (!conn) return std::unexpected(conn.error());
  return conn->request(method, path, body, headers);
}

}  // namespace cn::fakes
