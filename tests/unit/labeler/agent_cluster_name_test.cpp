// The cluster name in `k8s:io.cilium.k8s.policy.cluster`: the agent's, read once from its
// /v1/healthz when it answers, --cluster-name when it cannot tell; shared by both workers.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <sstream>

#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include "labeler/daemon/labeler_daemon.h"
#include "labeler/daemon/work_queue.h"
#include "labeler/watch/reconciler.h"
#include "tests/support/alloc_ids.h"
#include "tests/support/temp_dir.h"
#include "tests/unit/labeler/in_memory_apis.h"

namespace cn::labeler {
namespace {

using cn::testing::CiliumCall;
using cn::testing::InMemoryCilium;
using cn::testing::InMemoryNomad;
using cn::testing::make_alloc;

using cn::testing::kAllocId;

std::string cluster_label(const cilium::Endpoint& ep) {
  for (const auto& l : ep.identity_labels) {
    if (l.starts_with("k8s:io.cilium.k8s.policy.cluster=")) return l.substr(l.find('=') + 1);
  }
  return "<none>";
}

int lines_containing(const std::string& text, const std::string& needle) {
  int n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

// The two workers that derive labels, sharing one holder as the daemon wires them.
class SharedClusterNameTest : public ::testing::Test {
 protected:
  SharedClusterNameTest()
      : state_({dir_.file("state.json")}, system_clock(), nullptr),
        labeler_(LabelPathDeps{nomad_, cilium_, state_, system_clock(), metrics_, calls_, nullptr},
                 settings()),
        reconciler_(
            LabelPathDeps{nomad_, cilium_, state_, system_clock(), metrics_, calls_, nullptr},
            settings()),
        queue_(system_clock(), 2, 100, [this](WorkItem w) { labeler_.label(w); }) {
    queue_.start();
  }
  LabelSettings settings() {
    LabelSettings s;
    s.policy.cluster_name = "flag-name";  // overridden by the holder
    s.cluster_name = name_;
    return s;
  }
  Result<ReconcileReport> reconcile() {
    auto r = reconciler_.run(nomad_.node_id,
                             [this](WorkItem w) { return queue_.enqueue(std::move(w)); });
    EXPECT_TRUE(queue_.wait_idle(std::chrono::seconds{30}));
    return r;
  }

  cn::testing::TempDir dir_;
  InMemoryNomad nomad_;
  InMemoryCilium cilium_;
  Metrics metrics_;
  CallRecorder calls_{metrics_};
  std::shared_ptr<ClusterName> name_ = std::make_shared<ClusterName>("default");
  state::StateStore state_;
  AllocLabeler labeler_;
  Reconciler reconciler_;
  WorkQueue queue_;
};

TEST_F(SharedClusterNameTest, AnEndpointLabeledBeforeTheNameChangedIsRewrittenByTheNextReconcile) {
  nomad_.put(make_alloc(kAllocId));
  const auto ep = cilium_.add_init_endpoint(kAllocId, "10.200.3.17");
  auto first = reconcile();
  ASSERT_TRUE(first) << first.error().message;
  EXPECT_EQ(cluster_label(cilium_.get(ep)), "default");
  const int writes = cilium_.calls(CiliumCall::patch_endpoint);

  name_->set("eu");
  auto second = reconcile();
  ASSERT_TRUE(second) << second.error().message;
  EXPECT_EQ(second->correct, 0u);
  EXPECT_EQ(second->enqueued, 1u);
  EXPECT_EQ(cluster_label(cilium_.get(ep)), "eu");
  EXPECT_EQ(cilium_.calls(CiliumCall::patch_endpoint), writes + 1);

  // And once right, it stays right: no further write.
  auto third = reconcile();
  ASSERT_TRUE(third) << third.error().message;
  EXPECT_EQ(third->correct, 1u);
  EXPECT_EQ(cilium_.calls(CiliumCall::patch_endpoint), writes + 1);
}

class AgentClusterNameTest : public ::testing::Test {
 protected:
  void SetUp() override {
    log_ = std::make_shared<spdlog::logger>(
        "test", std::make_shared<spdlog::sinks::ostream_sink_mt>(log_text_));
    nomad_.put(make_alloc(kAllocId));
    ep_ = cilium_.add_init_endpoint(kAllocId, "10.200.3.17");
  }
  void TearDown() override {
    if (daemon_) daemon_->stop();
  }
  // Starts with --cluster-name `flag` and waits until the startup reconcile's work is done.
  void start(const std::string& flag, bool k8s_compat = true) {
    DaemonConfig config;
    config.socket_path = dir_.file("run/labeler.sock");
    config.state_file = dir_.file("run/state.json");
    config.resync_interval = std::chrono::seconds{0};
    config.metrics_addr = "";
    config.allowed_uids = {0, static_cast<unsigned>(::getuid())};
    config.policy.cluster_name = flag;
    config.policy.k8s_compat = k8s_compat;
    daemon_ = std::make_unique<LabelerDaemon>(config, nomad_, cilium_, system_clock(), log_);
    std::stop_source never;
    ASSERT_TRUE(daemon_->start(never.get_token()));
    ASSERT_TRUE(daemon_->ready());
    ASSERT_TRUE(daemon_->queue().wait_idle(std::chrono::seconds{10}));
  }
  std::string log_text() {
    log_->flush();
    return log_text_.str();
  }

  cn::testing::TempDir dir_;
  InMemoryNomad nomad_;
  InMemoryCilium cilium_;
  long long ep_ = 0;
  std::ostringstream log_text_;
  std::shared_ptr<spdlog::logger> log_;
  std::unique_ptr<LabelerDaemon> daemon_;
};

TEST_F(AgentClusterNameTest, AgentsClusterPrefixWinsOverTheFlag) {
  cilium_.set_healthz_body(R"({"cluster":{"self":"eu/node1"}})");
  start("default");
  EXPECT_EQ(daemon_->cluster_name(), "eu");
  EXPECT_EQ(cluster_label(cilium_.get(ep_)), "eu");
  EXPECT_EQ(cilium_.calls(CiliumCall::healthz), 1);
}

TEST_F(AgentClusterNameTest, BareNodeNameMeansClusterDefault) {
  cilium_.set_healthz_body(R"({"cluster":{"self":"node1"}})");
  start("prod");
  EXPECT_EQ(daemon_->cluster_name(), "default");
  EXPECT_EQ(cluster_label(cilium_.get(ep_)), "default");
}

TEST_F(AgentClusterNameTest, HealthzWithoutClusterKeepsTheFlag) {
  cilium_.set_healthz_body(R"({"cilium":{"state":"Ok"}})");
  start("prod");
  EXPECT_EQ(daemon_->cluster_name(), "prod");
  EXPECT_EQ(cluster_label(cilium_.get(ep_)), "prod");
  const auto text = log_text();
  EXPECT_EQ(lines_containing(text, "agent's cluster name unknown, labeling with --cluster-name"), 1)
      << text;
  EXPECT_NE(text.find("kind=bad_answer"), std::string::npos) << text;
}

TEST_F(AgentClusterNameTest, FailedHealthzKeepsTheFlagAndStartupGoesOn) {
  cilium_.fail_next(CiliumCall::healthz, 1, 500);
  start("prod");
  EXPECT_EQ(daemon_->cluster_name(), "prod");
  EXPECT_EQ(cluster_label(cilium_.get(ep_)), "prod");
}

TEST_F(AgentClusterNameTest, MismatchIsLoggedOnceNamingBothAndTheFix) {
  cilium_.set_healthz_body(R"({"cluster":{"self":"eu/node1"}})");
  start("default");
  // More passes and labels do not repeat it.
  ASSERT_TRUE(daemon_->reconcile_now());
  ASSERT_TRUE(daemon_->reconcile_now());
  ASSERT_TRUE(daemon_->queue().wait_idle(std::chrono::seconds{10}));
  const auto text = log_text();
  EXPECT_EQ(lines_containing(
                text, "cluster name differs, labeling with the agent's: agent=eu flag=default"),
            1)
      << text;
  EXPECT_EQ(lines_containing(text, "fix=\"set the labeler's --cluster-name=eu\""), 1) << text;
  EXPECT_EQ(cilium_.calls(CiliumCall::healthz), 1);
}

TEST_F(AgentClusterNameTest, AgreeingNamesLogNothing) {
  cilium_.set_healthz_body(R"({"cluster":{"self":"eu/node1"}})");
  start("eu");
  EXPECT_EQ(lines_containing(log_text(), "cluster name"), 0) << log_text();
  EXPECT_EQ(cluster_label(cilium_.get(ep_)), "eu");
}

TEST_F(AgentClusterNameTest, WithoutCompatLabelsTheAgentIsNotAsked) {
  cilium_.set_healthz_body(R"({"cluster":{"self":"eu/node1"}})");
  start("default", /*k8s_compat=*/false);
  EXPECT_EQ(cilium_.calls(CiliumCall::healthz), 0);
  EXPECT_EQ(cluster_label(cilium_.get(ep_)), "<none>");
}

}  // namespace
}  // namespace cn::labeler
