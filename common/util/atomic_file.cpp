#include "common/util/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <filesystem>

namespace cn {

namespace {

Status write_all(int fd, std::string_view data) {
  std::size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail_errno(errno_text(errno), errno);
    }
    done += static_cast<std::size_t>(n);
  }
  return {};
}

}  // namespace

Status replace_file_atomically(const std::string& path, std::string_view content, mode_t mode) {
  static std::atomic<unsigned> counter{0};
  const std::string tmp =
      path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter.fetch_add(1));
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (fd < 0) return fail_errno("cannot create " + tmp + ": " + errno_text(errno), errno);
  Status written = write_all(fd, content);
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
