#pragma once
// Polls a condition until it holds or a deadline passes, for state only visible from outside (a
// file appearing, another process's counters). The period bounds the reaction time; it is not a
// guess at how long anything takes.
#include <chrono>
#include <functional>
#include <thread>

namespace cn::bench {

inline bool wait_until(const std::function<bool()>& condition, std::chrono::milliseconds timeout,
                       std::chrono::milliseconds period = std::chrono::milliseconds{20}) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (condition()) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(period);
  }
}

}  // namespace cn::bench
