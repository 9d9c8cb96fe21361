#include "tests/support/manual_clock.h"

namespace cn {

ManualClock::ManualClock(WallTime wall_start) : mono_(std::chrono::hours{1}), wall_(wall_start) {}

MonoTime ManualClock::now() const {
  MutexLock lock(mu_);
  return mono_;
}

WallTime ManualClock::wall_now() const {
  MutexLock lock(mu_);
  return wall_;
}

bool ManualClock::sleep_until(MonoTime deadline, std::stop_token stop) {
  MutexLock lock(mu_);
  ++sleepers_;
  cv_.notify_all();  // wait_for_sleepers() watches the count
  bool reached = cv_.wait(lock, stop, [&]() REQUIRES(mu_) { return mono_ >= deadline; });
  --sleepers_;
  return reached;
}

void ManualClock::advance(std::chrono::nanoseconds d) {
  {
    MutexLock lock(mu_);
    mono_ += std::chrono::duration_cast<MonoTime::duration>(d);
    wall_ += std::chrono::duration_cast<WallTime::duration>(d);
  }
  cv_.notify_all();
}

void ManualClock::jump_wall(std::chrono::nanoseconds d) {
  MutexLock lock(mu_);
  wall_ += std::chrono::duration_cast<WallTime::duration>(d);
}

bool ManualClock::wait_for_sleepers(int n, std::chrono::milliseconds real_timeout) {
  MutexLock lock(mu_);
  return cv_.wait_for(lock, real_timeout, [&]() REQUIRES(mu_) { return sleepers_ >= n; });
}

int ManualClock::sleepers() const {
  MutexLock lock(mu_);
  return sleepers_;
}

}  // namespace cn
