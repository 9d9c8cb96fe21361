#include "tests/fakes/cilium/fsnotify_watch.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

namespace cn::fakes::cilium {

FsnotifyWatch::~FsnotifyWatch() {
  stop();
}

Status FsnotifyWatch::init() {
  inotify_fd_ = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
  if (inotify_fd_ < 0) return fail_errno("inotify_init1", errno);
  wake_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd_ < 0) return fail_errno("eventfd", errno);
  return {};
}

Status FsnotifyWatch::add(const std::string& dir) {
  // fsnotify's mask for Add(): no IN_CLOSE_WRITE, so writes are seen one by one.
  const std::uint32_t mask = IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE | IN_ATTRIB | IN_MODIFY |
                             IN_MOVE_SELF | IN_DELETE | IN_DELETE_SELF;
  if (inotify_add_watch(inotify_fd_, dir.c_str(), mask) < 0) {
    return fail_errno("inotify_add_watch " + dir, errno);
  }
  return {};
}

void FsnotifyWatch::start(OnEvent on_event) {
  thread_ = std::jthread(
      [this, on_event = std::move(on_event)](std::stop_token st) { run(st, on_event); });
}

void FsnotifyWatch::stop() {
  if (thread_.joinable()) {
    thread_.request_stop();
    const std::uint64_t one = 1;
    [[maybe_unused]] auto n = write(wake_fd_, &one, sizeof one);
    thread_.join();
  }
  if (inotify_fd_ >= 0) close(inotify_fd_);
  if (wake_fd_ >= 0) close(wake_fd_);
  inotify_fd_ = wake_fd_ = -1;
}

void FsnotifyWatch::run(std::stop_token stop, const OnEvent& on_event) {
  alignas(inotify_event) char buf[64 * 1024];
  while (!stop.stop_requested()) {
    pollfd fds[2] = {{inotify_fd_, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[1].revents != 0 || stop.stop_requested()) return;
    const ssize_t n = read(inotify_fd_, buf, sizeof buf);
    if (n <= 0) continue;
    for (ssize_t off = 0; off < n;) {
      const auto* ev = reinterpret_cast<const inotify_event*>(buf + off);
      off += static_cast<ssize_t>(sizeof(inotify_event) + ev->len);
      if (!on_event(*ev)) return;
    }
  }
}

}  // namespace cn::fakes::cilium
