#pragma once
// Bounded waits on conditions other threads or processes make true. Never a fixed sleep: a wait
// ends as soon as its condition holds, and a test that waits in vain fails at the deadline.
#include <chrono>
#include <functional>
#include <thread>

namespace cn::reliability {

inline bool eventually(const std::function<bool()>& cond,
                       std::chrono::milliseconds timeout = std::chrono::seconds{20},
                       std::chrono::milliseconds poll = std::chrono::milliseconds{5}) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!cond()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(poll);
  }
  return true;
}

}  // namespace cn::reliability
