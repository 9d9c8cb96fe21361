// What /healthz says for a whole daemon on the manual clock: its start-up reason first, then the
// health tracker's verdict, which the daemon's dependency calls feed.
#include <gtest/gtest.h>

#include <unistd.h>

#include "labeler/serve/readiness.h"
#include "tests/support/manual_clock.h"
#include "tests/support/temp_dir.h"
#include "tests/unit/labeler/in_memory_apis.h"

namespace cn::labeler {
namespace {

using namespace std::chrono_literals;

class ReadinessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    config_.socket_path = dir_.file("run/labeler.sock");
    config_.state_file = dir_.file("run/state.json");
    config_.resync_interval = 0s;
    config_.watch = WatchMode::kNone;
    config_.metrics_addr = "";
    config_.unhealthy_after = 30s;
    config_.allowed_uids = {0, static_cast<unsigned>(::getuid())};
  }

  cn::testing::TempDir dir_;
  cn::testing::InMemoryNomad nomad_;
  cn::testing::InMemoryCilium cilium_;
  ManualClock clock_;
  DaemonConfig config_;
};

TEST_F(ReadinessTest, NotReadyWithTheDaemonsReasonUntilTheFirstReconcile) {
  LabelerDaemon daemon(config_, nomad_, cilium_, clock_, nullptr);
  auto v = daemon_readiness(daemon);
  EXPECT_FALSE(v.ready);
  EXPECT_EQ(v.reason, "starting");
}

// Expected: after start, a Cilium outage reported through health() turns the daemon not ready
// once it outlasts --unhealthy-after, and one answered call turns it ready again.
TEST_F(ReadinessTest, FollowsTheHealthTrackerOnceStarted) {
  LabelerDaemon daemon(config_, nomad_, cilium_, clock_, nullptr);
  std::stop_source never;
  ASSERT_TRUE(daemon.start(never.get_token()));
  EXPECT_TRUE(daemon_readiness(daemon).ready);

  daemon.health().failed(Dependency::kCilium, "connection refused");
  clock_.advance(30s);
  EXPECT_TRUE(daemon_readiness(daemon).ready);
  clock_.advance(1s);
  auto v = daemon_readiness(daemon);
  EXPECT_FALSE(v.ready);
  EXPECT_EQ(v.reason, "Cilium agent unreachable for 31 s: connection refused");

  daemon.health().succeeded(Dependency::kCilium);
  EXPECT_TRUE(daemon_readiness(daemon).ready);
  daemon.stop();
}

}  // namespace
}  // namespace cn::labeler
