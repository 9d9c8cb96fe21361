#pragma once
// Notices a file's new content the moment it lands: inotify on the directory (IN_MOVED_TO for an
// atomic rename, IN_CLOSE_WRITE for a write in place), then a read of the file to check it.
// Nothing polls on a period, so the time taken is the writer's, not a polling interval's.
#include <chrono>
#include <functional>
#include <optional>
#include <string>

namespace cn::bench {

class FileArrival {
 public:
  explicit FileArrival(const std::string& dir);
  ~FileArrival();
  FileArrival(const FileArrival&) = delete;
  FileArrival& operator=(const FileArrival&) = delete;

  // When `path` was first seen holding content for which `arrived` is true (checked at once,
  // then after every event in the directory); nullopt after `timeout`.
  std::optional<std::chrono::steady_clock::time_point> wait(
      const std::string& path, const std::function<bool(const std::string&)>& arrived,
      std::chrono::milliseconds timeout);

 private:
  int fd_ = -1;
};

}  // namespace cn::bench
