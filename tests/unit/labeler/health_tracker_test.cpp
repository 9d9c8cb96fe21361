// Readiness on the manual clock: outages shorter than the window are blips, longer ones make the
// labeler not ready until the dependency answers again.
#include <gtest/gtest.h>

#include "labeler/serve/health_tracker.h"
#include "tests/support/manual_clock.h"

namespace cn::labeler {
namespace {

using namespace std::chrono_literals;

class HealthTrackerTest : public ::testing::Test {
 protected:
  ManualClock clock_;
  HealthTracker health_{clock_, 60s};
};

TEST_F(HealthTrackerTest, NotReadyUntilStartedEvenWithEveryDependencyAnswering) {
  health_.succeeded(Dependency::kCilium);
  health_.succeeded(Dependency::kNomad);
  auto v = health_.verdict();
  EXPECT_FALSE(v.ready);
  EXPECT_EQ(v.reason, "starting");
  health_.started();
  EXPECT_TRUE(health_.verdict().ready);
  EXPECT_EQ(health_.verdict().reason, "");
}

TEST_F(HealthTrackerTest, OutageShorterThanTheWindowKeepsReady) {
  health_.started();
  health_.failed(Dependency::kCilium, "connection refused");
  clock_.advance(60s);
  EXPECT_TRUE(health_.verdict().ready) << "exactly the window is still within it";
  health_.failed(Dependency::kCilium, "connection refused");
  EXPECT_TRUE(health_.verdict().ready) << "a later failure must not restart or shorten the outage";
}

TEST_F(HealthTrackerTest, OutageLongerThanTheWindowIsNotReadyWithDependencyDurationAndLastReason) {
  health_.started();
  health_.failed(Dependency::kCilium, "connection refused");
  clock_.advance(30s);
  health_.failed(Dependency::kCilium, "timed out");
  clock_.advance(31s);
  auto v = health_.verdict();
  EXPECT_FALSE(v.ready);
  EXPECT_EQ(v.reason, "Cilium agent unreachable for 61 s: timed out");
}

TEST_F(HealthTrackerTest, OneSuccessEndsTheOutageAndReadyComesBack) {
  health_.started();
  health_.failed(Dependency::kNomad, "connection refused");
  clock_.advance(90s);
  ASSERT_FALSE(health_.verdict().ready);
  health_.succeeded(Dependency::kNomad);
  EXPECT_TRUE(health_.verdict().ready);

  // A new outage is measured from its own first failure, not the old one's.
  health_.failed(Dependency::kNomad, "connection refused");
  clock_.advance(10s);
  EXPECT_TRUE(health_.verdict().ready);
}

TEST_F(HealthTrackerTest, SuccessOfOneDependencyDoesNotHideTheOther) {
  health_.started();
  health_.failed(Dependency::kNomad, "connection refused");
  clock_.advance(61s);
  health_.succeeded(Dependency::kCilium);
  auto v = health_.verdict();
  EXPECT_FALSE(v.ready);
  EXPECT_EQ(v.reason, "Nomad unreachable for 61 s: connection refused");
}

TEST_F(HealthTrackerTest, BothDownReasonNamesBothAndReadyOnlyWhenBothAreBack) {
  health_.started();
  health_.failed(Dependency::kCilium, "no socket");
  health_.failed(Dependency::kNomad, "refused");
  clock_.advance(2min);
  auto v = health_.verdict();
  EXPECT_FALSE(v.ready);
  EXPECT_EQ(v.reason,
            "Cilium agent unreachable for 120 s: no socket; Nomad unreachable for 120 s: refused");
  health_.succeeded(Dependency::kCilium);
  EXPECT_FALSE(health_.verdict().ready);
  health_.succeeded(Dependency::kNomad);
  EXPECT_TRUE(health_.verdict().ready);
}

TEST_F(HealthTrackerTest, WindowIsConfigurable) {
  HealthTracker strict(clock_, 5s);
  strict.started();
  strict.failed(Dependency::kCilium, "refused");
  clock_.advance(6s);
  EXPECT_FALSE(strict.verdict().ready);
  EXPECT_EQ(strict.unhealthy_after(), 5s);
}

}  // namespace
}  // namespace cn::labeler
