#pragma once
// A stand-in for the labeler's notification socket, for plugin tests and the plugin benchmark:
// it records every request and either confirms at once, or reads and never answers (so the
// plugin's deadline is what ends the wait).
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/notify/protocol.h"

namespace cn::testing {

class StubLabeler {
 public:
  enum class Mode { kConfirm, kSilent };

  StubLabeler(std::string socket_path, Mode mode);
  ~StubLabeler();
  StubLabeler(const StubLabeler&) = delete;
  StubLabeler& operator=(const StubLabeler&) = delete;

  std::vector<notify::Request> requests() const;
  // Waits (bounded, real time) until at least n requests arrived.
  bool wait_for_requests(std::size_t n,
                         std::chrono::milliseconds timeout = std::chrono::seconds{10});

 private:
  void serve();
  void handle(int fd);

  std::string path_;
  Mode mode_;
  int listen_fd_ = -1;
  int stop_pipe_[2] = {-1, -1};
  std::thread thread_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<notify::Request> requests_;
  std::vector<int> held_;  // silent mode keeps connections open until destruction
};

}  // namespace cn::testing
