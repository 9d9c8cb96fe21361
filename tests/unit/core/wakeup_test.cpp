// The kickable wait every loop of the labeler uses (common/util/wakeup.h), on simulated time.
#include "common/util/wakeup.h"

#include <gtest/gtest.h>

#include <future>

#include "tests/support/manual_clock.h"

namespace cn {
namespace {

using namespace std::chrono_literals;

TEST(WakeupTest, AKickBeforeTheWaitEndsItAtOnceAndIsConsumed) {
  ManualClock clock;
  Wakeup wakeup;
  wakeup.kick();
  wakeup.kick();  // kicks while nobody waits are kept as one
  EXPECT_TRUE(wakeup.wait_until(clock, clock.now() + 1h, {}));
  EXPECT_FALSE(wakeup.take());
}

TEST(WakeupTest, AKickEndsAWaitInProgressAndTheDeadlineEndsOneWithout) {
  ManualClock clock;
  Wakeup wakeup;
  auto kicked = std::async(std::launch::async,
                           [&] { return wakeup.wait_until(clock, clock.now() + 1h, {}); });
  ASSERT_TRUE(clock.wait_for_sleepers(1));
  wakeup.kick();
  EXPECT_TRUE(kicked.get());

  auto timed_out = std::async(std::launch::async,
                              [&] { return wakeup.wait_until(clock, clock.now() + 1s, {}); });
  ASSERT_TRUE(clock.wait_for_sleepers(1));
  clock.advance(1s);
  EXPECT_FALSE(timed_out.get());
}

TEST(WakeupTest, StopEndsTheWaitWithoutAKick) {
  ManualClock clock;
  Wakeup wakeup;
  std::stop_source stop;
  auto stopped = std::async(std::launch::async, [&] {
    return wakeup.wait_until(clock, clock.now() + 1h, stop.get_token());
  });
  ASSERT_TRUE(clock.wait_for_sleepers(1));
  stop.request_stop();
  EXPECT_FALSE(stopped.get());
}

TEST(WakeupTest, StartsKickedWhenAsked) {
  ManualClock clock;
  Wakeup wakeup(true);
  EXPECT_TRUE(wakeup.wait_until(clock, clock.now() + 1h, {}));
}

}  // namespace
}  // namespace cn
