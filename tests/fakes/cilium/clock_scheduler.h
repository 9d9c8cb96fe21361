#pragma once
// Runs delayed work (identity resolution, regeneration steps) on one background thread against
// the injected cn::Clock, so a test with a ManualClock decides when "5 s later" happens.
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <queue>
#include <stop_token>
#include <thread>
#include <vector>

#include "common/util/clock.h"

namespace cn::fakes::cilium {

class ClockScheduler {
 public:
  explicit ClockScheduler(Clock& clock);
  ~ClockScheduler();
  ClockScheduler(const ClockScheduler&) = delete;
  ClockScheduler& operator=(const ClockScheduler&) = delete;

  void at(MonoTime when, std::function<void()> fn);
  void after(std::chrono::nanoseconds delay, std::function<void()> fn) {
    at(clock_.now() + std::chrono::duration_cast<MonoTime::duration>(delay), std::move(fn));
  }
  // Waits (real time, bounded) until nothing is due at the clock's current time and no task
  // runs. Future tasks do not count: with a ManualClock they wait for advance().
  bool wait_idle(std::chrono::milliseconds real_timeout = std::chrono::seconds(5));
  std::size_t pending() const;
  void clear();
  Clock& clock() { return clock_; }

 private:
  struct Task {
    MonoTime when;
    std::uint64_t seq;
    std::function<void()> fn;
    bool operator>(const Task& o) const { return when != o.when ? when > o.when : seq > o.seq; }
  };
  void run(std::stop_token stop);
  bool idle_locked() const;

  Clock& clock_;
  mutable std::mutex mu_;
  std::condition_variable_any cv_;
  std::condition_variable_any idle_cv_;
  std::priority_queue<Task, std::vector<Task>, std::greater<>> queue_;
  std::uint64_t seq_ = 0;
  bool running_ = false;
  std::stop_source* wake_ = nullptr;
  std::jthread worker_;
};

}  // namespace cn::fakes::cilium
