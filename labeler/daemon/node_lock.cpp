#include "labeler/daemon/node_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>

#include "common/state/state_store.h"

namespace cn::labeler {

std::string NodeLock::path_for(const std::string& state_file) {
  return state_file + ".labeler.lock";
}

NodeLock::NodeLock(std::string path) : path_(std::move(path)) {}

NodeLock::~NodeLock() {
  if (fd_ >= 0) ::close(fd_);
}

Result<bool> NodeLock::try_lock() {
  if (locked_) return true;
  if (fd_ < 0) {
    // O_NOFOLLOW: the directory is root's, but a symlink planted there must not make root create
    // or truncate a file elsewhere.
    constexpr int kFlags = O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW;
    fd_ = ::open(path_.c_str(), kFlags, 0600);
    if (fd_ < 0 && errno == ENOENT) {
      if (auto ok = state::ensure_state_dir(path_); !ok) return std::unexpected(ok.error());
      fd_ = ::open(path_.c_str(), kFlags, 0600);
    }
    if (fd_ < 0) return fail_errno("cannot open " + path_ + " (" + errno_text(errno) + ")", errno);
  }
  while (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    if (errno == EINTR) continue;
    if (errno != EWOULDBLOCK)
      return fail_errno("cannot lock " + path_ + " (" + errno_text(errno) + ")", errno);
    std::array<char, 32> buf{};
    const ssize_t n = ::pread(fd_, buf.data(), buf.size() - 1, 0);
    long pid = 0;
    if (n > 0) std::from_chars(buf.data(), buf.data() + n, pid);
    holder_pid_ = pid;
    return false;
  }
  locked_ = true;
  holder_pid_ = ::getpid();
  // Only for the next labeler's message: a failed write leaves it without a name, not unlocked.
  const std::string text = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd_, 0) == 0) (void)!::pwrite(fd_, text.data(), text.size(), 0);
  return true;
}

Result<NodeLock::Outcome> NodeLock::wait(Clock& clock, const Deadline& deadline,
                                         std::chrono::milliseconds retry) {
  for (;;) {
    auto taken = try_lock();
    if (!taken) return std::unexpected(taken.error());
    if (*taken) return Outcome::locked;
    const MonoTime now = clock.now();
    if (now >= deadline.at) return Outcome::held;
    clock.sleep_until(std::min(now + retry, deadline.at), deadline.stop);
    if (deadline.stop.stop_requested()) return Outcome::stopped;
  }
}

}  // namespace cn::labeler
