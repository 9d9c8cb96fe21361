#pragma once
// A long-running child (the labeler, the fake binaries) for the benchmarks: the shared
// testing::ChildProcess with the bench's environment passed on (so a run can be tuned from the
// shell), output truncated into a log file, stopped with SIGTERM and, past a grace, SIGKILL.
#include <chrono>
#include <string>
#include <vector>

#include "tests/support/child_process.h"

namespace cn::bench {

class ChildProcess : public testing::ChildProcess {
 public:
  // Throws when the program cannot be started.
  ChildProcess(const std::vector<std::string>& argv, std::string log_path);
  ~ChildProcess() { stop(std::chrono::seconds{2}); }

  // SIGTERM, wait up to `grace`, then SIGKILL. Returns the exit code (-1: killed or unknown).
  int stop(std::chrono::milliseconds grace = std::chrono::seconds{5});
  // The last `bytes` of the child's output, for error messages.
  std::string log_tail(std::size_t bytes = 2000) const;
};

}  // namespace cn::bench
