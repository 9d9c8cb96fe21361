#include "bench/support/file_arrival.h"

#include <poll.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace cn::bench {

namespace {

std::optional<std::string> read_whole(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

}  // namespace

FileArrival::FileArrival(const std::string& dir) {
  fd_ = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (fd_ < 0) throw std::runtime_error("inotify_init1 failed");
  if (::inotify_add_watch(fd_, dir.c_str(), IN_MOVED_TO | IN_CLOSE_WRITE | IN_CREATE) < 0) {
    ::close(fd_);
    throw std::runtime_error("inotify_add_watch failed on " + dir);
  }
}

FileArrival::~FileArrival() {
  if (fd_ >= 0) ::close(fd_);
}

std::optional<std::chrono::steady_clock::time_point> FileArrival::wait(
    const std::string& path, const std::function<bool(const std::string&)>& arrived,
    std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  alignas(inotify_event) char buf[16384];
  for (;;) {
    // Drain first: every event up to now is covered by the read below.
    while (::read(fd_, buf, sizeof buf) > 0) {
    }
    if (auto content = read_whole(path); content && arrived(*content))
      return std::chrono::steady_clock::now();
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return std::nullopt;
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count()) + 1) < 0 && errno != EINTR)
      throw std::runtime_error("poll on inotify failed");
  }
}

}  // namespace cn::bench
