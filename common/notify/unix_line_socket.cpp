#include "common/notify/unix_line_socket.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace cn::notify {
namespace {

// Waits for `events` on fd until the deadline; 0 on readiness, else an error.
Status wait_for(int fd, short events, Clock& clock, MonoTime deadline) {
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock.now());
    if (left.count() <= 0) return fail_errno("deadline reached", ETIMEDOUT);
    pollfd p{fd, events, 0};
    int n = ::poll(&p, 1, static_cast<int>(std::min<long long>(left.count(), 1000)));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail_errno(errno_text(errno), errno);
    if (n > 0) return {};
  }
}

}  // namespace

UniqueFd::UniqueFd(UniqueFd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}

UniqueFd& UniqueFd::operator=(UniqueFd&& other) noexcept {
  if (this != &other) {
    reset();
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

UniqueFd::~UniqueFd() {
  reset();
}

void UniqueFd::reset() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

Result<UniqueFd> connect_unix(const std::string& path, Clock& clock, MonoTime deadline) {
  sockaddr_un addr{};
  if (path.size() >= sizeof addr.sun_path) return fail("socket path too long: " + path);
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);

  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd) return fail_errno(std::string("socket: ") + errno_text(errno), errno);
  for (;;) {
    if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0) return fd;
    if (errno == EINTR) continue;
    if (errno == EINPROGRESS) break;
    if (errno == EAGAIN) {  // listen backlog full: the labeler is busy, not gone
      if (auto ok = wait_for(fd.get(), POLLOUT, clock, deadline); !ok) {
        return std::unexpected(ok.error());
      }
      continue;
    }
    return fail_errno("connect " + path + ": " + errno_text(errno), errno);
  }
  if (auto ok = wait_for(fd.get(), POLLOUT, clock, deadline); !ok)
    return std::unexpected(ok.error());
  int err = 0;
  socklen_t len = sizeof err;
  ::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &err, &len);
  if (err != 0) return fail_errno("connect " + path + ": " + errno_text(err), err);
  return fd;
}

Status send_all(int fd, std::string_view data, Clock& clock, MonoTime deadline) {
  while (!data.empty()) {
    ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      data.remove_prefix(static_cast<std::size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (auto ok = wait_for(fd, POLLOUT, clock, deadline); !ok) return ok;
      continue;
    }
    return fail_errno(std::string("send: ") + errno_text(errno), errno);
  }
  return {};
}

Result<std::string> read_line(int fd, std::size_t max_bytes, Clock& clock, MonoTime deadline) {
  std::string line;
  char buf[4096];
  for (;;) {
    // MSG_PEEK first so that bytes after the newline stay in the socket for the next call.
    ssize_t n = ::recv(fd, buf, sizeof buf, MSG_PEEK | MSG_DONTWAIT);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (auto ok = wait_for(fd, POLLIN, clock, deadline); !ok) return std::unexpected(ok.error());
      continue;
    }
    if (n < 0) return fail_errno(std::string("recv: ") + errno_text(errno), errno);
    if (n == 0) return fail_errno("connection closed before a full line", ECONNRESET);
    std::string_view chunk(buf, static_cast<std::size_t>(n));
    auto nl = chunk.find('\n');
    std::size_t take = nl == std::string_view::npos ? chunk.size() : nl + 1;
    ssize_t got = ::recv(fd, buf, take, MSG_DONTWAIT);
    if (got <= 0) continue;
    line.append(buf, static_cast<std::size_t>(got));
    if (line.size() > max_bytes)
      return fail_errno("line longer than " + std::to_string(max_bytes), EMSGSIZE);
    if (nl != std::string_view::npos) return line;
  }
}

}  // namespace cn::notify
