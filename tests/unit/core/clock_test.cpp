#include <gtest/gtest.h>

#include <cstdio>
#include <ctime>
#include <thread>
#include <vector>

#include "common/util/alloc_id.h"
#include "common/util/clock.h"
#include "tests/support/manual_clock.h"

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

// rfc3339 does its own calendar arithmetic (no gmtime_r, whose tzset reads /etc/localtime): it
// must agree with the C library on every kind of day, before the epoch too.
TEST(Rfc3339, AgreesWithGmtimeOnLeapDaysCenturiesAndBeforeTheEpoch) {
  // Leap days, century years, the last millisecond of a day, and near the end of WallTime
  // (nanoseconds in 64 bits run out in 2262).
  std::vector<long long> ms = {0,
                               -1,
                               -999,
                               -1000,
                               -1001,
                               951782400000,
                               -2203891200000,
                               4107456000000,
                               4107542399999,
                               9'000'000'000'000};
  for (long long step = 86'399'999; ms.size() < 2000; step = step * 7 % 18'000'000'000'000 + 1)
    ms.push_back(step - 9'000'000'000'000);  // 1684 to 2255
  for (long long m : ms) {
    std::time_t secs = static_cast<std::time_t>(m / 1000 - (m % 1000 < 0 ? 1 : 0));
    std::tm tm{};
    ASSERT_NE(gmtime_r(&secs, &tm), nullptr);
    char want[64];
    std::snprintf(want, sizeof want, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                  tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                  static_cast<int>((m % 1000 + 1000) % 1000));
    EXPECT_EQ(rfc3339(WallTime{std::chrono::milliseconds{m}}), want) << m;
  }
}

// Every position: a dash where hex belongs, a non-hex byte where hex belongs, hex where a dash
// belongs; each makes the ID invalid (the check is a table over the hex runs).
TEST(AllocId, RefusesAWrongByteAtAnyPosition) {
  const std::string good = "4b1f6c2e-8d3a-9f57-1c2b-7e0a5d9c3f11";
  ASSERT_TRUE(is_valid_alloc_id(good));
  for (std::size_t i = 0; i < good.size(); ++i) {
    const bool dash = good[i] == '-';
    for (char bad : dash ? std::string("0aF-g") : std::string("-gG/ \x80\xff")) {
      if (dash && bad == '-') continue;
      std::string id = good;
      id[i] = bad;
      EXPECT_FALSE(is_valid_alloc_id(id)) << id;
    }
  }
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
