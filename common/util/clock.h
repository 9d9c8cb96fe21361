#pragma once
// Time is injected everywhere a deadline, backoff or timestamp is computed, so tests drive it
// by hand (tests/support/manual_clock.h) instead of sleeping. Deadlines always use the monotonic
// clock: a wall clock jump never shortens or stretches a wait.
#include <chrono>
#include <stop_token>
#include <string>

namespace cn {

using MonoTime = std::chrono::steady_clock::time_point;
using WallTime = std::chrono::system_clock::time_point;
using Millis = std::chrono::milliseconds;

// When an outside call must be done by, and the stop that abandons it sooner: a shutdown must not
// wait out a PATCH queued in the agent's limiter or a worker's confirmation poll. Implicit from a
// bare time on purpose: most callers have no stop to pass.
struct Deadline {
  Deadline(MonoTime when, std::stop_token stop_token = {})
      : at(when), stop(std::move(stop_token)) {}  // NOLINT
  MonoTime at;
  std::stop_token stop;
};

class Clock {
 public:
  virtual ~Clock() = default;
  virtual MonoTime now() const = 0;
  virtual WallTime wall_now() const = 0;
  // Blocks until now() >= deadline or stop is requested. Returns false when stopped early.
  virtual bool sleep_until(MonoTime deadline, std::stop_token stop) = 0;
  bool sleep_for(std::chrono::nanoseconds d, std::stop_token stop) {
    return sleep_until(now() + d, std::move(stop));
  }
};

class SystemClock final : public Clock {
 public:
  MonoTime now() const override { return std::chrono::steady_clock::now(); }
  WallTime wall_now() const override { return std::chrono::system_clock::now(); }
  bool sleep_until(MonoTime deadline, std::stop_token stop) override;
};

SystemClock& system_clock();

// Milliseconds since the Unix epoch, for timestamps written to files and logs.
long long unix_millis(WallTime t);
// RFC 3339 with millisecond precision in UTC, e.g. 2026-11-29T20:13:14.123Z.
std::string rfc3339(WallTime t);

}  // namespace cn
