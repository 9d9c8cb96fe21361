// Two nodes, each running the whole services loop against one fake Nomad on the system clock,
// with nothing kicking them: what reaches each node's file comes through the loop's own wakeups
// (the Service event stream, the watch of the reports and VIP table, the check poll). The fake
// agent's reader watches node 1's file throughout, as the agent does, and must never refuse it.
#include "labeler/services/services_loop.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <thread>

#include "common/util/read_whole_file.h"
#include "labeler/serve/metrics.h"
#include "tests/fakes/cilium/lb_state_sync.h"
#include "tests/fakes/nomad/fake_nomad.h"
#include "tests/support/eventually.h"
#include "tests/support/manual_clock.h"
#include "tests/support/temp_dir.h"
#include "tests/unit/services/two_node_cluster.h"

namespace cn::labeler {
namespace {

using namespace std::chrono_literals;
using cn::testing::eventually;

using testing::kNode1;
using testing::kNode2;

// One labeler's services feature, its loop on a thread of its own.
struct LoopNode : testing::SyncNode {
  LoopNode(const std::string& address, const VipRange& range, std::string node_id,
           std::string state_file, Clock& clock = system_clock(),
           std::chrono::seconds resync = std::chrono::seconds{300})
      : SyncNode(address, range, clock, std::move(node_id), std::move(state_file)) {
    ServicesLoopOptions loop_options;
    loop_options.check_interval = 50ms;
    loop_options.watch_wait = 5s;
    loop_options.seed = 7;
    loop_options.resync_interval = resync;
    loop = std::make_unique<ServicesLoop>(
        ServicesLoopDeps{*client, *sync, clock, metrics, calls, nullptr}, loop_options);
    thread = std::jthread([this](std::stop_token st) { loop->run(st); });
  }
  ~LoopNode() {
    thread.request_stop();
    thread = {};
  }

  Metrics metrics;
  CallRecorder calls{metrics};
  std::unique_ptr<ServicesLoop> loop;
  std::jthread thread;
};

class ServicesLoopTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto cluster = testing::start_two_node_cluster();
    fake_ = std::move(cluster.nomad);
    alloc1_ = cluster.alloc1;
    alloc2_ = cluster.alloc2;
    ASSERT_TRUE(fake_->set_check_status(alloc1_, "api-alive", "success"));
    ASSERT_TRUE(fake_->set_check_status(alloc2_, "api-alive", "success"));

    fakes::cilium::LbStateSyncOptions agent;
    agent.path = file1();
    agent.interval = 10ms;
    agent.emulation.minor = 19;
    agent.emulation.patch = 5;
    agent.log = [this](const std::string& line) {
      std::lock_guard lock(agent_log_mu_);
      agent_log_.push_back(line);
    };
    agent_ = std::make_unique<fakes::cilium::LbStateSync>(agent, system_clock());
    ASSERT_TRUE(agent_->start());
    start_node1();
    node2_ = std::make_unique<LoopNode>(fake_->address(), range_, kNode2, file2());
  }
  void TearDown() override {
    node1_.reset();
    node2_.reset();
    agent_->stop();
    fake_->stop();
    std::lock_guard lock(agent_log_mu_);
    for (const auto& line : agent_log_) {
      // Before the first write the agent finds no file, as it does on a real node.
      if (line.find("failed to read file: open") != std::string::npos) continue;
      EXPECT_EQ(line.find("level=error"), std::string::npos) << "the agent refused: " << line;
    }
  }
  void start_node1() {
    node1_ = std::make_unique<LoopNode>(fake_->address(), range_, kNode1, file1());
  }

  std::string file1() const { return dir_.path() + "/node1.json"; }
  std::string file2() const { return dir_.path() + "/node2.json"; }
  // address -> ready, from a state file's slices; empty while the file is missing.
  static std::map<std::string, bool> backends(const std::string& path) {
    auto text = read_whole_file(path, 1 << 20);
    if (!text) return {};
    auto doc = nlohmann::json::parse(*text);
    std::map<std::string, bool> out;
    for (const auto& slice : doc["endpoints"]) {
      out[slice["endpoints"][0]["addresses"][0]] = slice["endpoints"][0]["conditions"]["ready"];
    }
    return out;
  }
  static std::string vip(const std::string& path) {
    auto text = read_whole_file(path, 1 << 20);
    if (!text) return "";
    auto doc = nlohmann::json::parse(*text);
    if (doc["services"].empty()) return "";
    return doc["services"][0]["spec"]["clusterIP"];
  }
  bool both(const std::map<std::string, bool>& want) {
    return eventually([&] { return backends(file1()) == want && backends(file2()) == want; });
  }

  cn::testing::TempDir dir_;
  VipRange range_ = *VipRange::parse("10.96.0.0/16");
  std::unique_ptr<fakes::FakeNomad> fake_;
  std::string alloc1_;
  std::string alloc2_;
  std::mutex agent_log_mu_;
  std::vector<std::string> agent_log_;
  std::unique_ptr<fakes::cilium::LbStateSync> agent_;
  std::unique_ptr<LoopNode> node1_;
  std::unique_ptr<LoopNode> node2_;
};

TEST_F(ServicesLoopTest, BothNodesServeTheSameVipAndEveryReadyInstance) {
  ASSERT_TRUE(both({{"10.200.1.5", true}, {"10.200.2.5", true}}));
  EXPECT_EQ(vip(file1()), ip_text(range_.choice("default", "api", 0)));
  EXPECT_EQ(vip(file1()), vip(file2()));
  // The agent reads the file a settle interval after the rename's event.
  EXPECT_TRUE(eventually([&] { return agent_->snapshot().frontends.size() == 1; }));
}

TEST_F(ServicesLoopTest, AFailingCheckOnOneNodeReachesTheOtherNodesFile) {
  ASSERT_TRUE(both({{"10.200.1.5", true}, {"10.200.2.5", true}}));
  ASSERT_TRUE(fake_->set_check_status(alloc2_, "api-alive", "failure"));
  EXPECT_TRUE(both({{"10.200.1.5", true}, {"10.200.2.5", false}}));
  ASSERT_TRUE(fake_->set_check_status(alloc2_, "api-alive", "success"));
  EXPECT_TRUE(both({{"10.200.1.5", true}, {"10.200.2.5", true}}));
}

TEST_F(ServicesLoopTest, ADeregisteredInstanceLeavesBothFiles) {
  ASSERT_TRUE(both({{"10.200.1.5", true}, {"10.200.2.5", true}}));
  ASSERT_TRUE(fake_->deregister_services(alloc1_));
  EXPECT_TRUE(both({{"10.200.2.5", true}}));
}

TEST_F(ServicesLoopTest, ARestartedNodeKeepsTheVip) {
  ASSERT_TRUE(both({{"10.200.1.5", true}, {"10.200.2.5", true}}));
  const std::string before = vip(file1());
  node1_.reset();
  ASSERT_TRUE(std::filesystem::remove(file1()));
  start_node1();
  ASSERT_TRUE(eventually([&] { return !vip(file1()).empty(); }));
  EXPECT_EQ(vip(file1()), before);
}

// Nomad down when a resync falls due: the relist fails and is retried on the backoff, with every
// thread of the loop asleep on the clock in between, not in a loop of failing requests.
TEST(ServicesLoopBackoffTest, APassThatFailsWaitsOutItsBackoff) {
  auto cluster = testing::start_two_node_cluster();
  cn::testing::TempDir dir;
  ManualClock clock;
  // The HTTP client reads call deadlines against the real steady clock: start the simulated one
  // at the real time, so that a call's deadline is a few seconds ahead of it.
  clock.advance(std::chrono::steady_clock::now() - clock.now());
  const VipRange range = *VipRange::parse("10.96.0.0/16");
  LoopNode node(cluster.nomad->address(), range, kNode1, dir.file("node1.json"), clock, 10s);
  ASSERT_TRUE(eventually([&] { return node.loop->passes() >= 1; }));
  cluster.nomad->stop();
  clock.advance(11s);
  auto failed = [&] { return node.metrics.services_passes(false).Value(); };
  ASSERT_TRUE(eventually([&] { return failed() >= 1; }));
  // The pass thread, the event stream's and the watch's backoffs.
  ASSERT_TRUE(clock.wait_for_sleepers(3)) << "failed passes: " << failed();
  EXPECT_LE(failed(), 3);
}

}  // namespace
}  // namespace cn::labeler
