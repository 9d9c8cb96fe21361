#pragma once
// The real labeler daemon started in the background: a testing::ChildProcess whose stdout and
// stderr are appended to a log file the test can search (appended, so a restarted daemon's
// lines follow the killed one's in the same file).
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "tests/support/child_process.h"

namespace cn::reliability {

class BackgroundProcess : public testing::ChildProcess {
 public:
  BackgroundProcess(const std::vector<std::string>& argv, const testing::Environment& env,
                    std::string log_path)
      : ChildProcess(argv, env, {std::move(log_path), LogMode::kAppend, std::nullopt}) {}

  // Sends `sig` and reaps the process (bounded). nullopt: it outlived the deadline (and was
  // then SIGKILLed).
  std::optional<testing::ExitStatus> kill_and_wait(
      int sig, std::chrono::milliseconds timeout = std::chrono::seconds{20}) {
    return stop(sig, timeout);
  }

  // Waits (bounded) until the log holds `needle` at least `times` times.
  bool wait_for_log(const std::string& needle,
                    std::chrono::milliseconds timeout = std::chrono::seconds{20},
                    int times = 1) const;
};

int count_occurrences(const std::string& haystack, const std::string& needle);

}  // namespace cn::reliability
