#pragma once
// Simulated time for tests whose code under test sleeps on an injected ManualClock: a thread that
// moves the clock, so minutes of backoff, outages and resync intervals pass in a second while
// every deadline still comes from the injected clock.
#include <chrono>
#include <thread>

#include "common/util/clock.h"
#include "tests/support/manual_clock.h"

namespace cn::testing {

class ClockPump {
 public:
  enum class Mode {
    // Advances by `step` each time a thread sleeps on the clock: for tests where only the outcome
    // of a backoff matters. After each step the woken sleeper gets time to leave (one still
    // counted would otherwise be advanced again and again while it waits for the clock's mutex).
    on_sleep,
    // Advances by `step` every millisecond of real time, whoever sleeps: time runs on as it
    // does on a node, for tests of outages and clock jumps.
    periodic,
  };

  ClockPump(ManualClock& clock, std::chrono::milliseconds step, Mode mode)
      : thread_([&clock, step, mode](std::stop_token stop) {
          using std::chrono::steady_clock;
          while (!stop.stop_requested()) {
            if (mode == Mode::periodic) {
              clock.advance(step);
              std::this_thread::sleep_for(std::chrono::milliseconds{1});
              continue;
            }
            if (!clock.wait_for_sleepers(1, std::chrono::milliseconds{20})) continue;
            clock.advance(step);
            const auto until = steady_clock::now() + std::chrono::milliseconds{20};
            while (clock.sleepers() > 0 && steady_clock::now() < until) {
              std::this_thread::sleep_for(std::chrono::microseconds{200});
            }
          }
        }) {}

 private:
  std::jthread thread_;
};

}  // namespace cn::testing
