#include "common/util/clock.h"

#include <cstdio>
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
  // Calendar arithmetic, not gmtime_r: glibc's gmtime_r runs tzset, which opens and reads
  // /etc/localtime on first use (seven system calls) although UTC needs no zone data. The CNI
  // plugin stamps every entry and log line with this.
  using namespace std::chrono;
  const auto ms = floor<milliseconds>(t);
  const auto day = floor<days>(ms);
  const year_month_day date{day};
  const hh_mm_ss time{ms - day};
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02u-%02uT%02d:%02d:%02d.%03dZ",
                static_cast<int>(date.year()), static_cast<unsigned>(date.month()),
                static_cast<unsigned>(date.day()), static_cast<int>(time.hours().count()),
                static_cast<int>(time.minutes().count()), static_cast<int>(time.seconds().count()),
                static_cast<int>(time.subseconds().count()));
  return buf;
}

}  // namespace cn
