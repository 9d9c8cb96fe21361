// The duty runner on simulated time, with a real election over the in-memory etcd: a duty runs
// only while its labeler leads, on its own interval, and a refused fence ends the term at once.
#include "labeler/cluster/duty_runner.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "tests/support/eventually.h"
#include "tests/support/manual_clock.h"
#include "tests/unit/cluster/in_memory_etcd.h"

namespace cn::labeler::cluster {
namespace {

using namespace std::chrono_literals;
using testing::eventually;
using testing::InMemoryEtcd;

// Counts its passes; ends each with the end the test sets.
class CountingDuty final : public Duty {
 public:
  explicit CountingDuty(std::atomic<int>& passes, std::atomic<PassEnd>& end)
      : passes_(passes), end_(end) {}
  DutyName name() const override { return DutyName::identity_gc; }
  std::chrono::milliseconds interval() const override { return 60s; }
  PassOutcome run_pass(const LeaderFence&, std::stop_token) override {
    ++passes_;
    PassOutcome out;
    out.end = end_.load();
    return out;
  }

 private:
  std::atomic<int>& passes_;
  std::atomic<PassEnd>& end_;
};

class DutyRunnerTest : public ::testing::Test {
 protected:
  DutyRunnerTest() {
    LeaderElectionSettings s;
    s.key = leader_key("default");
    s.holder = "node-a";
    s.lease_ttl = 15s;
    election = std::make_unique<LeaderElection>(etcd, clock, s, nullptr);
    std::vector<std::unique_ptr<Duty>> duties;
    duties.push_back(std::make_unique<CountingDuty>(passes, end));
    runner =
        std::make_unique<DutyRunner>(*election, clock, std::move(duties), nullptr, nullptr, 1s);
  }
  ~DutyRunnerTest() override {
    stop.request_stop();
    runner->join();
    if (election_thread.joinable()) election_thread.join();
  }
  void start_election() {
    election_thread = std::jthread([this] { election->run(stop.get_token()); });
  }

  ManualClock clock;
  InMemoryEtcd etcd{clock};
  std::atomic<int> passes{0};
  std::atomic<PassEnd> end{PassEnd::complete};
  std::stop_source stop;
  std::unique_ptr<LeaderElection> election;
  std::unique_ptr<DutyRunner> runner;
  std::jthread election_thread;
};

TEST_F(DutyRunnerTest, AFollowerRunsNoPass) {
  // Another labeler holds the key: this one never leads.
  auto lease = etcd.grant_lease(std::chrono::hours{1}, Deadline(MonoTime::max()));
  ASSERT_TRUE(lease);
  ASSERT_TRUE(etcd.put(leader_key("default"), "node-b", lease->id, Deadline(MonoTime::max())));
  start_election();
  runner->start(stop.get_token());
  ASSERT_TRUE(eventually([&] { return election->view().holder == "node-b"; }));
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(clock.wait_for_sleepers(2));
    clock.advance(5s);
  }
  EXPECT_EQ(passes.load(), 0);
}

TEST_F(DutyRunnerTest, ALeaderRunsAtOnceThenOncePerInterval) {
  start_election();
  ASSERT_TRUE(eventually([&] { return election->view().leading; }));
  runner->start(stop.get_token());
  ASSERT_TRUE(eventually([&] { return passes.load() == 1; }));
  const MonoTime first = clock.now();
  // Second by second until the second pass: never before the interval (a starved election
  // thread may lose and regain the lease on simulated time, so only "not early" is exact).
  for (int i = 0; i < 300 && passes.load() < 2; ++i) {
    ASSERT_TRUE(clock.wait_for_sleepers(1));
    clock.advance(1s);
    eventually([&] { return passes.load() == 2; }, std::chrono::milliseconds{20});
  }
  ASSERT_EQ(passes.load(), 2);
  EXPECT_GE(clock.now() - first, 60s);
}

TEST_F(DutyRunnerTest, AFenceLostPassEndsTheTermAtOnce) {
  start_election();
  ASSERT_TRUE(eventually([&] { return election->view().leading; }));
  end = PassEnd::fence_lost;
  std::stop_token term = election->term_token();
  runner->start(stop.get_token());
  ASSERT_TRUE(eventually([&] { return passes.load() == 1; }));
  EXPECT_TRUE(eventually([&] { return term.stop_requested(); }));
}

}  // namespace
}  // namespace cn::labeler::cluster
