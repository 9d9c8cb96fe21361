// The real labeler binary in --watch events mode against a fake Nomad whose event stream
// breaks: closed after every 10 events, and an index that goes backwards (servers restored
// from an older snapshot). No plugin ADD runs here: the watch alone must find every
// allocation, so anything it loses stays unlabeled and fails the test.
#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include "tests/reliability/support/background_process.h"
#include "tests/reliability/support/fake_node.h"
#include "tests/reliability/support/wait.h"

namespace cn::reliability {
namespace {

using namespace std::chrono_literals;

constexpr const char* kOtherNode = "7e9a1c3b-5d2f-4a6e-8b0c-1d3e5f7a9b2c";

class NomadWatchFaults : public ::testing::Test {
 protected:
  void SetUp() override {
    fakes::NodeRecord other;
    other.id = kOtherNode;
    other.name = "worker-2";
    other.ip = "10.0.1.16";
    node_.nomad().add_node(other);
  }
  void TearDown() override {
    if (labeler_) {
      EXPECT_EQ(sanitizer_report(labeler_->log()), "");
    }
  }
  void start_labeler() {
    labeler_ = std::make_unique<BackgroundProcess>(
        node_.labeler_argv({"--watch", "events", "--resync-interval", "0"}), node_.labeler_env(),
        node_.dir().file("labeler.log"));
    ASSERT_TRUE(labeler_->wait_for_log("ready: node=")) << labeler_->log();
    ASSERT_TRUE(node_.nomad().wait_for_streams(1));
  }
  // Placement (PlanResult), cilium-cni's endpoint, the client's report (AllocationUpdated).
  std::string start_alloc(const std::string& ip) {
    std::string id = node_.place();
    node_.create_endpoint(id, ip);
    node_.report_network(id, ip);
    return id;
  }
  // Noise the watcher must filter out: another node's allocation, with its own events.
  void start_elsewhere(const std::string& ip) {
    fakes::PlaceRequest req;
    req.job_id = "web";
    req.node_id = kOtherNode;
    auto id = node_.nomad().place_alloc(req);
    ASSERT_TRUE(id);
    ASSERT_TRUE(node_.nomad().set_network_status(*id, {ip, "", "eth0"}));
  }
  std::vector<std::uint64_t> asked_indexes() const {
    std::vector<std::uint64_t> out;
    for (const auto& r : node_.nomad().requests()) {
      auto at = r.target.find("index=");
      if (r.route == "event_stream" && at != std::string::npos)
        out.push_back(std::stoull(r.target.substr(at + 6)));
    }
    return out;
  }

  FakeNode node_;
  std::unique_ptr<BackgroundProcess> labeler_;
};

// Expected: with the stream closed after every 10 events, the watcher resumes each time right
// after the last frame it handled (indexes asked strictly increase) and resyncs; every
// allocation of this node is labeled, each endpoint written exactly once (the agent's request
// log counts the PATCHes), and the other node's allocations are never touched. Data lost: 0.
TEST_F(NomadWatchFaults, StreamDroppedEveryTenEventsNoLossAndNoDoubleApply) {
  if (::geteuid() != 0) GTEST_SKIP() << "runs the labeler binary, which needs root for its socket";
  node_.nomad().set_stream_drop_after(10);
  start_labeler();
  std::vector<std::string> mine;
  for (int i = 0; i < 20; ++i) {
    mine.push_back(start_alloc("10.200.50." + std::to_string(i + 1)));
    if (i % 4 == 0) start_elsewhere("10.200.51." + std::to_string(i + 1));
  }
  for (const auto& a : mine)
    ASSERT_TRUE(node_.wait_labeled(a, kWebLabels, 30s)) << a << "\n" << labeler_->log();
  // The resyncs after each reconnect may label faster than the stream catches up; wait until it
  // has read all ~50 events (10 per stream) and sits on a live stream again.
  ASSERT_TRUE(eventually(
      [&] { return asked_indexes().size() >= 6 && node_.nomad().active_streams() == 1; }, 30s))
      << labeler_->log();

  int doubled = 0;
  for (const auto& a : mine) doubled += node_.label_writes(a) != 1 ? 1 : 0;
  EXPECT_EQ(doubled, 0);
  EXPECT_EQ(node_.agent().count("PATCH", ""), 20) << "only this node's 20 endpoints were written";
  auto asked = asked_indexes();
  for (std::size_t i = 1; i < asked.size(); ++i)
    EXPECT_GT(asked[i], asked[i - 1]) << "resume, never rewind";
  EXPECT_GE(count_occurrences(labeler_->log(), "event stream reopened, resyncing"), 4);
  std::printf(
      "stream drop every 10 events: %zu streams opened, %d endpoints, 0 lost, 0 written twice\n",
      asked.size(), static_cast<int>(mine.size()));
}

// Expected: after Nomad's index goes backwards (a restore from an older snapshot), the watcher
// says so in its log, forgets what it tracked and labels allocations placed after the restore,
// although their events carry indexes lower than any it had seen. Data lost: 0.
TEST_F(NomadWatchFaults, IndexGoingBackwardsResetsTheWatcherAndNewAllocationsAreStillLabeled) {
  if (::geteuid() != 0) GTEST_SKIP() << "runs the labeler binary, which needs root for its socket";
  node_.nomad().skip_to_index(5000);
  start_labeler();
  std::string before = start_alloc("10.200.52.1");
  ASSERT_TRUE(node_.wait_labeled(before, kWebLabels)) << labeler_->log();

  node_.nomad().reset_index(1500);  // closes the stream; the watcher asks for 5000-something again
  ASSERT_TRUE(labeler_->wait_for_log("event stream reopened, resyncing", 20s, 1))
      << labeler_->log();
  std::vector<std::string> after;
  for (int i = 0; i < 3; ++i) after.push_back(start_alloc("10.200.52." + std::to_string(i + 10)));
  for (const auto& a : after)
    ASSERT_TRUE(node_.wait_labeled(a, kWebLabels, 20s)) << a << "\n" << labeler_->log();
  EXPECT_NE(labeler_->log().find("index went backwards"), std::string::npos) << labeler_->log();
  EXPECT_EQ(node_.label_writes(before), 1);
}

}  // namespace
}  // namespace cn::reliability
