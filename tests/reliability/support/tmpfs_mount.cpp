#include "tests/reliability/support/tmpfs_mount.h"

#include <fcntl.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace cn::reliability {

TmpfsMount::TmpfsMount(std::string path, std::size_t bytes) : path_(std::move(path)) {
  std::error_code ec;
  std::filesystem::create_directories(path_, ec);
  std::string options = "size=" + std::to_string(bytes) + ",mode=0700";
  if (::mount("tmpfs", path_.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, options.c_str()) != 0) {
    error_ = std::string("mount tmpfs on ") + path_ + ": " + std::strerror(errno);
    return;
  }
  mounted_ = true;
}

TmpfsMount::~TmpfsMount() {
  // Lazy: a file the code under test still holds open must not keep the mount alive.
  if (mounted_) ::umount2(path_.c_str(), MNT_DETACH);
}

std::size_t TmpfsMount::fill(const std::string& filler_name) {
  int fd =
      ::open((path_ + "/" + filler_name).c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (fd < 0) return 0;
  char block[4096];
  std::memset(block, 'f', sizeof block);
  std::size_t total = 0;
  // Whole blocks first, then single bytes, so not even a one-line write fits afterwards.
  for (std::size_t chunk : {sizeof block, std::size_t{1}}) {
    for (;;) {
      ssize_t n = ::write(fd, block, chunk);
      if (n <= 0) break;
      total += static_cast<std::size_t>(n);
    }
  }
  ::fsync(fd);
  ::close(fd);
  return total;
}

void TmpfsMount::unfill(const std::string& filler_name) {
  ::unlink((path_ + "/" + filler_name).c_str());
}

}  // namespace cn::reliability
