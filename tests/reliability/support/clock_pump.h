#pragma once
// Runs simulated time: advances a ManualClock by `step` every `period` of real time, so that
// minutes of backoff, outages and resync intervals pass in a second while every deadline in the
// code under test still comes from the injected clock.
#include <chrono>
#include <thread>

#include "common/util/clock.h"

namespace cn::reliability {

class ClockPump {
 public:
  ClockPump(ManualClock& clock, std::chrono::milliseconds step,
            std::chrono::milliseconds period = std::chrono::milliseconds{1})
      : thread_([&clock, step, period](std::stop_token stop) {
          while (!stop.stop_requested()) {
            clock.advance(step);
            std::this_thread::sleep_for(period);
          }
        }) {}

 private:
  std::jthread thread_;
};

}  // namespace cn::reliability
