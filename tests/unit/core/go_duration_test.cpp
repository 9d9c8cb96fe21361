#include "common/util/go_duration.h"

#include <gtest/gtest.h>

namespace cn {
namespace {

using namespace std::chrono_literals;

TEST(GoDuration, ReadsWhatGoOperatorsWrite) {
  EXPECT_EQ(parse_go_duration("500ms"), 500ms);
  EXPECT_EQ(parse_go_duration("2s"), 2s);
  EXPECT_EQ(parse_go_duration("15m"), 15min);
  EXPECT_EQ(parse_go_duration("1h30m"), 90min);
  EXPECT_EQ(parse_go_duration("1.5s"), 1500ms);
  EXPECT_EQ(parse_go_duration("0"), 0ms);
  EXPECT_EQ(parse_go_duration("0s"), 0ms);
}

TEST(GoDuration, RefusesWhatGoRefuses) {
  EXPECT_FALSE(parse_go_duration(""));
  EXPECT_FALSE(parse_go_duration("12"));  // a unit is required except for "0"
  EXPECT_FALSE(parse_go_duration("5 s"));
  EXPECT_FALSE(parse_go_duration("15min"));
  EXPECT_FALSE(parse_go_duration("s"));
  EXPECT_FALSE(parse_go_duration("-5s"));  // no negative durations for timers
}

TEST(GoDuration, FormatsTheWayItReads) {
  EXPECT_EQ(format_go_duration(15min), "15m");
  EXPECT_EQ(format_go_duration(90s), "1m30s");
  EXPECT_EQ(format_go_duration(500ms), "500ms");
  EXPECT_EQ(format_go_duration(0ms), "0s");
  for (std::chrono::milliseconds d : {1ms, 999ms, 1000ms, 61000ms, 3601001ms, 15000ms, 300000ms})
    EXPECT_EQ(parse_go_duration(format_go_duration(d)), d);
}

}  // namespace
}  // namespace cn
