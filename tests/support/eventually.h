#pragma once
// The one bounded wait for tests: polls a condition another thread or process makes true. Never
// a fixed sleep: the wait ends as soon as the condition holds, and a test that waits in vain
// fails at the deadline instead of hanging the suite.
#include <chrono>
#include <functional>
#include <thread>

namespace cn::testing {

inline bool eventually(const std::function<bool()>& cond,
                       std::chrono::milliseconds timeout = std::chrono::seconds{20},
                       std::chrono::milliseconds poll = std::chrono::milliseconds{2}) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!cond()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(poll);
  }
  return true;
}

}  // namespace cn::testing
