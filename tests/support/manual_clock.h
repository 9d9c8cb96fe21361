#pragma once
// Simulated time for tests, benchmarks and fakes: the product only ever gets a Clock
// (common/util/clock.h), and a test hands it this one to move time by hand instead of sleeping.
#include <chrono>
#include <condition_variable>
#include <stop_token>

#include "common/util/clock.h"
#include "common/util/mutex.h"

namespace cn {

// advance() moves both clocks and wakes sleepers whose deadline has come.
class ManualClock final : public Clock {
 public:
  explicit ManualClock(WallTime wall_start = WallTime{std::chrono::seconds{1'800'000'000}});
  MonoTime now() const override;
  WallTime wall_now() const override;
  bool sleep_until(MonoTime deadline, std::stop_token stop) override;

  void advance(std::chrono::nanoseconds d);
  // Moves only the wall clock, as an NTP step or an operator's `date -s` would.
  void jump_wall(std::chrono::nanoseconds d);
  // Waits (in real time, bounded) until at least n threads sleep on this clock.
  bool wait_for_sleepers(int n, std::chrono::milliseconds real_timeout = std::chrono::seconds{10});
  int sleepers() const;

 private:
  mutable Mutex mu_;
  std::condition_variable_any cv_;
  MonoTime mono_ GUARDED_BY(mu_) = {};
  WallTime wall_ GUARDED_BY(mu_);
  int sleepers_ GUARDED_BY(mu_) = 0;
};

}  // namespace cn
