#pragma once
// A small tmpfs the test mounts over a directory and always unmounts: a disk that can really
// fill up, without touching the machine's own filesystems. Needs root (CAP_SYS_ADMIN).
#include <string>

namespace cn::reliability {

class TmpfsMount {
 public:
  TmpfsMount(std::string path, std::size_t bytes);
  ~TmpfsMount();
  TmpfsMount(const TmpfsMount&) = delete;
  TmpfsMount& operator=(const TmpfsMount&) = delete;

  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }
  // Writes a filler file until the filesystem answers ENOSPC; returns the bytes written.
  std::size_t fill(const std::string& filler_name = "filler");
  void unfill(const std::string& filler_name = "filler");

 private:
  std::string path_;
  std::string error_;
  bool mounted_ = false;
};

}  // namespace cn::reliability
