#include <gtest/gtest.h>

#include <thread>

#include "common/util/alloc_id.h"
#include "common/util/clock.h"

namespace cn {
namespace {

TEST(ManualClock, SleeperWakesOnlyWhenTimeIsAdvancedPastItsDeadline) {
  ManualClock clock;
  std::atomic<bool> woke{false};
  std::thread t([&] {
    clock.sleep_for(std::chrono::seconds{30}, {});
    woke = true;
  });
  ASSERT_TRUE(clock.wait_for_sleepers(1));
  clock.advance(std::chrono::seconds{29});
  EXPECT_FALSE(woke.load());
  EXPECT_EQ(clock.sleepers(), 1);
  clock.advance(std::chrono::seconds{1});
  t.join();
  EXPECT_TRUE(woke.load());
}

TEST(ManualClock, StopTokenEndsASleepEarly) {
  ManualClock clock;
  std::stop_source stop;
  bool reached = true;
  std::thread t([&] { reached = clock.sleep_for(std::chrono::hours{1}, stop.get_token()); });
  ASSERT_TRUE(clock.wait_for_sleepers(1));
  stop.request_stop();
  t.join();
  EXPECT_FALSE(reached);
}

TEST(ManualClock, WallJumpsDoNotMoveMonotonicTime) {
  ManualClock clock;
  auto mono = clock.now();
  auto wall = clock.wall_now();
  clock.jump_wall(-std::chrono::hours{5});
  EXPECT_EQ(clock.now(), mono);
  EXPECT_EQ(clock.wall_now(), wall - std::chrono::hours{5});
}

TEST(Rfc3339, FormatsUtcWithMilliseconds) {
  EXPECT_EQ(rfc3339(WallTime{std::chrono::milliseconds{1795983779205}}),
            "2026-11-29T20:22:59.205Z");
}

TEST(AllocId, AcceptsUuidsOnly) {
  EXPECT_TRUE(is_valid_alloc_id("4b1f6c2e-8d3a-9f57-1c2b-7e0a5d9c3f11"));
  EXPECT_TRUE(is_valid_alloc_id("4B1F6C2E-8D3A-9F57-1C2B-7E0A5D9C3F11"));
  for (const char* bad :
       {"", "4b1f6c2e8d3a9f571c2b7e0a5d9c3f11", "4b1f6c2e-8d3a-9f57-1c2b-7e0a5d9c3f1g",
        "../../../../etc/passwd-0000000000000", "4b1f6c2e-8d3a-9f57-1c2b-7e0a5d9c3f11\n"}) {
    EXPECT_FALSE(is_valid_alloc_id(bad)) << bad;
  }
}

}  // namespace
}  // namespace cn
