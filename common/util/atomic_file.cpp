#include "common/util/atomic_file.h"

#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <filesystem>

namespace cn {

namespace {

Status write_all(int fd, std::initializer_list<std::string_view> pieces) {
  constexpr std::size_t kMaxPieces = 4;
  if (pieces.size() > kMaxPieces) return fail("more than 4 pieces for one write");
  iovec iov[kMaxPieces];
  int count = 0;
  for (std::string_view piece : pieces) {
    if (!piece.empty()) iov[count++] = {const_cast<char*>(piece.data()), piece.size()};
  }
  for (int first = 0; first < count;) {
    ssize_t n = ::writev(fd, iov + first, count - first);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail_errno(errno_text(errno), errno);
    if (n == 0) return fail_errno("wrote nothing", EIO);
    // A short write: skip the pieces that went out whole and the part of the next that did.
    auto sent = static_cast<std::size_t>(n);
    while (first < count && sent >= iov[first].iov_len) sent -= iov[first++].iov_len;
    if (first < count) {
      iov[first].iov_base = static_cast<char*>(iov[first].iov_base) + sent;
      iov[first].iov_len -= sent;
    }
  }
  return {};
}

}  // namespace

Status replace_file_atomically(const std::string& path, std::string_view content, mode_t mode) {
  return replace_file_atomically(path, {content}, mode);
}

Status replace_file_atomically(const std::string& path,
                               std::initializer_list<std::string_view> pieces, mode_t mode) {
  static std::atomic<unsigned> counter{0};
  const std::string tmp =
      path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter.fetch_add(1));
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (fd < 0) return fail_errno("cannot create " + tmp + ": " + errno_text(errno), errno);
  Status written = write_all(fd, pieces);
  if (written && ::fsync(fd) != 0) written = fail_errno("fsync: " + errno_text(errno), errno);
  ::close(fd);
  if (!written) {
    ::unlink(tmp.c_str());
    return std::unexpected(with_context("cannot write " + tmp + ": ", written.error()));
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    return fail_errno("cannot rename " + tmp + ": " + errno_text(err), err);
  }
  // The rename is durable only once the directory entry is.
  auto parent = std::filesystem::path(path).parent_path();
  const std::string dir = parent.empty() ? "." : parent.string();
  int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  return {};
}

bool is_temp_file_of(std::string_view name, std::string_view target_name) {
  return name.size() > target_name.size() + 5 &&
         name.substr(0, target_name.size()) == target_name &&
         name.substr(target_name.size(), 5) == ".tmp.";
}

}  // namespace cn
