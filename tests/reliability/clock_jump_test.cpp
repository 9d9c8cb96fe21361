// The wall clock jumps (NTP step, `date -s`, a VM resumed) while the labeler waits. Every wait
// in the labeler is on the monotonic clock; the wall clock only stamps files and logs. A
// ManualClock moves the two independently: each test jumps the wall clock by hours both ways
// and shows nothing fires, then moves monotonic time and shows it fires exactly then.
#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <thread>

#include "common/notify/notify_client.h"
#include "labeler/daemon/work_queue.h"
#include "labeler/serve/metrics.h"
#include "labeler/serve/notify_server.h"
#include "tests/reliability/support/in_process_labeler.h"
#include "tests/reliability/support/wait.h"
#include "tests/support/clock_pump.h"
#include "tests/support/manual_clock.h"

namespace cn::reliability {
namespace {

using namespace std::chrono_literals;

constexpr auto kQuiet = 200ms;  // how long "nothing happens" is watched for, in real time

void jump_both_ways(ManualClock& clock) {
  clock.jump_wall(std::chrono::hours{24 * 365});
  clock.jump_wall(-std::chrono::hours{2 * 24 * 365});
}

// Expected: a retry due in 10 s is not run by wall jumps of a year either way, nor at 9.9 s of
// monotonic time; it runs once monotonic time reaches 10 s.
TEST(ClockJumps, DelayedRetryRunsOnMonotonicTimeOnly) {
  ManualClock clock;
  std::atomic<int> runs{0};
  labeler::WorkQueue queue(clock, 1, 16, [&](labeler::WorkItem) { ++runs; });
  queue.start();
  labeler::WorkItem item;
  item.alloc_id = "4b1f6c2e-8d3a-4f57-9c2b-7e0a5d9c3f11";
  ASSERT_TRUE(queue.enqueue_after(item, 10s));
  ASSERT_TRUE(clock.wait_for_sleepers(1));

  jump_both_ways(clock);
  EXPECT_FALSE(eventually([&] { return runs > 0; }, kQuiet));
  clock.advance(9900ms);
  EXPECT_FALSE(eventually([&] { return runs > 0; }, kQuiet));
  clock.advance(100ms);
  EXPECT_TRUE(eventually([&] { return runs == 1; }, 5s));
  queue.stop();
}

// Expected: a plugin waiting 1 s for "labeled" is told "pending" 50 ms before its deadline on
// the labeler's monotonic clock; wall jumps of a year either way neither answer it early nor
// hold it longer.
TEST(ClockJumps, WaitingPluginIsAnsweredAtItsMonotonicDeadlineOnly) {
  testing::TempDir dir;
  ManualClock clock;
  labeler::Metrics metrics;
  labeler::NotifyServer server(
      {dir.file("run/labeler.sock"), {0, static_cast<unsigned>(::getuid())}}, clock, metrics,
      nullptr);
  ASSERT_TRUE(server.listen());
  server.start([](const notify::Request&) {});  // the labeling never finishes

  std::atomic<bool> answered{false};
  std::optional<notify::ReplyStatus> status;
  std::jthread plugin([&] {
    notify::Request r;
    r.alloc_id = "4b1f6c2e-8d3a-4f57-9c2b-7e0a5d9c3f11";
    r.ifname = "eth0";
    r.wait_ms = 1000;
    auto& real = system_clock();
    auto reply = notify::send_request(dir.file("run/labeler.sock"), r, real, real.now() + 20s);
    if (reply && *reply) status = (*reply)->status;
    answered = true;
  });
  ASSERT_TRUE(eventually([&] { return server.waiting() == 1; }, 5s));

  jump_both_ways(clock);
  EXPECT_FALSE(eventually([&] { return answered.load(); }, kQuiet));
  clock.advance(940ms);
  EXPECT_FALSE(eventually([&] { return answered.load(); }, kQuiet));
  clock.advance(10ms);
  ASSERT_TRUE(eventually([&] { return answered.load(); }, 5s));
  plugin.join();
  EXPECT_EQ(status, notify::ReplyStatus::kPending);
  server.stop();
}

// Expected: with a 300 s resync interval (+-10% jitter), wall jumps of a year either way cause
// no resync; monotonic time past 330 s causes exactly one.
TEST(ClockJumps, PeriodicResyncFollowsMonotonicTimeOnly) {
  FakeNodeOptions options;
  options.identity_delay = 0ms;
  FakeNode node(options);
  ManualClock clock;
  auto config = InProcessLabeler::config_for(node);
  config.resync_interval = 300s;
  InProcessLabeler labeler(node, config, clock);
  ASSERT_TRUE(labeler.start());
  auto resyncs = [&] {
    return node.nomad().request_count("node_allocations") - 1;
  };  // minus the startup one
  // The resync loop, the retry timer and the notify server's expiry loop: the resync deadline
  // is fixed once its thread sleeps.
  ASSERT_TRUE(clock.wait_for_sleepers(3));

  jump_both_ways(clock);
  EXPECT_FALSE(eventually([&] { return resyncs() > 0; }, kQuiet));
  clock.advance(269s);  // below the earliest jittered deadline
  EXPECT_FALSE(eventually([&] { return resyncs() > 0; }, kQuiet));
  clock.advance(61s);  // past the latest
  EXPECT_TRUE(eventually([&] { return resyncs() == 1; }, 5s));
}

// Expected: an API call retrying 500s with a 10 s deadline keeps retrying through wall jumps
// of a year either way and gives up only when monotonic time passes the deadline, with
// Nomad's own error.
TEST(ClockJumps, ApiCallDeadlineIsMonotonic) {
  FakeNode node;
  node.nomad().fail_next(1'000'000, 500);
  ManualClock clock;
  nomad::NomadClientConfig cfg;
  cfg.address = node.nomad().address();
  cfg.retry.max_attempts = 1000;
  auto client = nomad::CurlNomadClient::create(cfg, clock);
  ASSERT_TRUE(client);
  std::atomic<bool> done{false};
  std::string error;
  std::jthread caller([&] {
    auto a = (*client)->allocation("4b1f6c2e-8d3a-4f57-9c2b-7e0a5d9c3f11", clock.now() + 10s);
    if (!a) error = a.error().message;
    done = true;
  });
  ASSERT_TRUE(clock.wait_for_sleepers(1));  // backing off after the first 500

  jump_both_ways(clock);
  EXPECT_FALSE(eventually([&] { return done.load(); }, kQuiet));
  {
    testing::ClockPump pump(
        clock, 20ms,
        testing::ClockPump::Mode::periodic);  // 10 s of monotonic time in about half a second
    EXPECT_TRUE(eventually([&] { return done.load(); }, 10s));
  }
  caller.join();
  EXPECT_NE(error.find("No cluster leader"), std::string::npos) << error;
  EXPECT_GE(node.nomad().request_count("allocation"), 2) << "retried after the jumps";
}

}  // namespace
}  // namespace cn::reliability
