#include "common/util/clock.h"

#include <condition_variable>
#include <cstdio>
#include <mutex>
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
