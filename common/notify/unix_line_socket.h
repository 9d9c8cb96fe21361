#pragma once
// Deadline-bounded I/O on a Unix stream socket carrying newline-framed messages. Nothing here
// blocks past the deadline: the plugin sits in the allocation start path and Nomad puts no
// timeout on CNI calls.
#include <string>

#include "common/util/clock.h"
#include "common/util/result.h"

namespace cn::notify {

// Owns a file descriptor; move-only.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept;
  UniqueFd& operator=(UniqueFd&& other) noexcept;
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd();
  int get() const { return fd_; }
  explicit operator bool() const { return fd_ >= 0; }
  void reset();

 private:
  int fd_ = -1;
};

[[nodiscard]] Result<UniqueFd> connect_unix(const std::string& path, Clock& clock,
                                            MonoTime deadline);
[[nodiscard]] Status send_all(int fd, std::string_view data, Clock& clock, MonoTime deadline);
// Reads up to and including the first '\n'. Fails on EOF, on a line longer than max_bytes, or
// at the deadline (error code ETIMEDOUT).
[[nodiscard]] Result<std::string> read_line(int fd, std::size_t max_bytes, Clock& clock,
                                            MonoTime deadline);

}  // namespace cn::notify
