// The Cilium agent away or restarted under the real labeler binary.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/reliability/support/background_process.h"
#include "tests/reliability/support/fake_node.h"
#include "tests/reliability/support/wait.h"

namespace cn::reliability {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

class CiliumAgentOutage : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "the labeler accepts notifications from root peers only";
  }
  void start_labeler(const std::vector<std::string>& flags) {
    labeler_ = std::make_unique<BackgroundProcess>(node_.labeler_argv(flags), node_.labeler_env(),
                                                   node_.dir().file("labeler.log"));
    ASSERT_TRUE(labeler_->wait_for_log("ready: node=")) << labeler_->log();
  }
  void TearDown() override {
    if (labeler_) {
      EXPECT_EQ(sanitizer_report(labeler_->log()), "");
    }
  }

  FakeNode node_;
  std::unique_ptr<BackgroundProcess> labeler_;
};

// Expected: with the agent's socket gone, ADD exits 0 and prints prevResult unchanged; its log
// line says the labeler has not finished (labeler=pending) and why (the agent's socket refuses
// connections, or: not labeled before the deadline, still trying). The labeler logs the same, and
// once the agent is back the endpoint gets its labels with one write and no second ADD. Data lost:
// 0.
TEST_F(CiliumAgentOutage, AgentDownDuringAddAddSucceedsAndLabelsComeOnceTheAgentIsBack) {
  start_labeler({"--watch", "none", "--resync-interval", "0"});
  const std::string ip = "10.200.20.1";
  std::string alloc = node_.running_alloc(ip);
  node_.agent().stop();

  auto add = node_.plugin_add(alloc, ip, 1000);
  ASSERT_EQ(add.exit_code, 0) << add.err;
  EXPECT_EQ(json::parse(add.out), FakeNode::prev_result(ip));
  EXPECT_NE(add.err.find("labeler=pending"), std::string::npos) << add.err;
  // Which comes first depends on the client's connect retries: the worker's reason, or the
  // labeler's answer just before the plugin's deadline. Both say what is going on: the worker's
  // names the agent's socket (gone, or left behind with nobody accepting on it).
  EXPECT_TRUE(add.err.find("no such file: ") != std::string::npos ||
              add.err.find("nothing accepts connections on ") != std::string::npos ||
              add.err.find("the labeler keeps trying") != std::string::npos)
      << add.err;
  ASSERT_TRUE(labeler_->wait_for_log("not labeled: alloc=" + alloc)) << labeler_->log();

  node_.agent().start();
  auto back = std::chrono::steady_clock::now();
  ASSERT_TRUE(node_.wait_labeled(alloc, kWebLabels, 30s)) << labeler_->log();
  auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - back)
          .count();
  std::printf("agent back -> endpoint labeled: %lld ms (labeler retry backoff)\n",
              static_cast<long long>(ms));
  EXPECT_EQ(node_.label_writes(alloc), 1);
  ASSERT_TRUE(eventually([&] {
    auto state = read_state_file(node_.state_file());
    return state.parsed && state.allocations.contains(alloc) &&
           state.allocations[alloc].contains("labeled");
  }));
}

// Expected: an agent restart renumbers every endpoint but keeps their labels; the next periodic
// resync (1 s here) finds them all correct, writes nothing, and records the new endpoint
// numbers in the state file. The in-process variant with an explicit reconcile is
// LabelerE2E.AgentRestartWithRenumberedEndpointsIsHealedByOneResync (tests/integration).
TEST_F(CiliumAgentOutage, AgentRestartWithRenumberedEndpointsIsHealedByTheNextResyncWithoutWrites) {
  start_labeler({"--watch", "none", "--resync-interval", "1"});
  std::vector<std::string> allocs;
  for (int i = 0; i < 5; ++i) {
    std::string ip = "10.200.21." + std::to_string(i + 1);
    allocs.push_back(node_.running_alloc(ip));
    ASSERT_EQ(node_.plugin_add(allocs.back(), ip, 3000).exit_code, 0);
  }
  for (const auto& a : allocs) ASSERT_TRUE(node_.wait_labeled(a, kWebLabels));
  const int resyncs_before = count_occurrences(labeler_->log(), "reconcile done:");

  node_.agent().restart(fakes::RestartOptions::renumbered());
  node_.agent().clear_requests();
  // Two more resyncs: the first may have started before the restart.
  ASSERT_TRUE(labeler_->wait_for_log("reconcile done:", 10s, resyncs_before + 2))
      << labeler_->log();
  EXPECT_EQ(node_.agent().count("PATCH", ""), 0)
      << "labels survive an agent restart: nothing to write";
  auto state = read_state_file(node_.state_file());
  ASSERT_TRUE(state.parsed);
  for (const auto& a : allocs) {
    auto ep = node_.endpoint_of(a);
    ASSERT_TRUE(ep);
    EXPECT_TRUE(node_.labeled(a, kWebLabels));
    EXPECT_EQ(state.allocations[a]["labeled"]["endpoint_id"], (*ep)["id"])
        << "state names the new number";
  }
}

}  // namespace
}  // namespace cn::reliability
