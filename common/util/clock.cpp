#include "common/util/clock.h"

#include <cstdio>
#include <ctime>
#include <string>

namespace cn {

bool SystemClock::sleep_until(MonoTime deadline, std::stop_token stop) {
  std::mutex mu;
  std::condition_variable_any cv;
  std::unique_lock lock(mu);
  return !cv.wait_until(lock, stop, deadline, [] { return false; }) && !stop.stop_requested();
}

SystemClock& system_clock() {
  static SystemClock clock;
  return clock;
}

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

long long unix_millis(WallTime t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

std::string rfc3339(WallTime t) {
  long long ms = unix_millis(t);
  auto secs = static_cast<std::time_t>(ms / 1000);
  if (ms < 0 && ms % 1000 != 0) --secs;
  int frac = static_cast<int>(((ms % 1000) + 1000) % 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, frac);
  return buf;
}

}  // namespace cn
