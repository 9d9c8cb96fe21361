// The duties as the runner sees them (duty_adapters.h): what a pass turns into for the metrics.
#include "labeler/cluster/duty_adapters.h"

#include <gtest/gtest.h>
#include <prometheus/metric_family.h>
#include <spdlog/spdlog.h>

#include "labeler/cluster/cluster_config.h"
#include "labeler/cluster/identity_range.h"
#include "labeler/serve/metrics.h"
#include "tests/support/refusing_nomad.h"
#include "tests/unit/cluster/cluster_test_support.h"

namespace cn::testing {
namespace {

// The duties tested here never call Nomad; every call fails, so one that did would show.
class DutyAdaptersNoNomad final : public RefusingNomad {
 protected:
  void refused(std::string_view call) override { ADD_FAILURE() << "a duty called Nomad: " << call; }
};

double gauge_value(const labeler::Metrics& metrics, std::string_view name) {
  for (const auto& family : metrics.registry().Collect())
    if (family.name == name && !family.metric.empty()) return family.metric.front().gauge.value;
  ADD_FAILURE() << name << " has no series";
  return -1;
}

class DutyAdaptersTest : public ClusterTest {
 protected:
  labeler::cluster::DutyContext context() {
    return labeler::cluster::DutyContext{etcd, nomad, clock, metrics, spdlog::default_logger(), {}};
  }
  labeler::cluster::ClusterDutySettings settings() {
    labeler::cluster::ClusterDutySettings s;
    s.enabled = true;
    s.cluster_id = 0;
    s.max_connected_clusters = 255;
    s.identity_gc_rate_limit = 0;
    return s;
  }
  DutyAdaptersNoNomad nomad;
  labeler::Metrics metrics;
};

// Expected: the identity GC duty sets the unreadable-report gauge the alert watches from every
// pass that read the reports, and clears it once the report is readable again.
TEST_F(DutyAdaptersTest, IdentityGcSetsTheUnreadableReportGauge) {
  metrics.init_cluster_duty_series();
  seed_identity(256, kFooLabels);
  seed_in_use("node-a", {256});
  ASSERT_TRUE(etcd.put(labeler::cluster::in_use_key("default", "node-b"), "{", agent_lease, far()));
  auto duty = labeler::cluster::make_identity_gc_duty(settings(), context());
  EXPECT_EQ(gauge_value(metrics, "cilium_nomad_in_use_reports_unreadable"), 0);
  auto outcome = duty->run_pass(fence, {});
  EXPECT_EQ(outcome.end, labeler::cluster::PassEnd::complete);
  EXPECT_EQ(gauge_value(metrics, "cilium_nomad_in_use_reports_unreadable"), 1);
  seed_in_use("node-b", {});
  clock.advance(std::chrono::minutes{1});
  duty->run_pass(fence, {});
  EXPECT_EQ(gauge_value(metrics, "cilium_nomad_in_use_reports_unreadable"), 0);
  EXPECT_TRUE(identity_exists(256));
}

// Expected: the cluster-config duty runs on upstream's 5-minute schedule, counts another writer's
// value as not ours every pass, and leaves it alone.
TEST_F(DutyAdaptersTest, ClusterConfigCountsAnotherWritersValueAsNotOurs) {
  auto s = settings();
  s.cluster_id = 4;
  auto duty = labeler::cluster::make_cluster_config_duty(s, context());
  EXPECT_EQ(duty->name(), labeler::cluster::DutyName::cluster_config);
  EXPECT_EQ(duty->interval(), std::chrono::minutes{5});
  auto ours = duty->run_pass(fence, {});
  EXPECT_EQ(ours.end, labeler::cluster::PassEnd::complete);
  EXPECT_EQ(ours.not_ours, 0);
  const std::string key = labeler::cluster::cluster_config_key("default");
  EXPECT_EQ(etcd.get(key)->value, R"({"id":4,"capabilities":{"maxConnectedClusters":255}})");

  ASSERT_TRUE(
      etcd.put(key, R"({"id":4,"capabilities":{"syncedCanaries":true}})", agent_lease, far()));
  auto theirs = duty->run_pass(fence, {});
  EXPECT_EQ(theirs.end, labeler::cluster::PassEnd::complete);
  EXPECT_EQ(theirs.not_ours, 1);
  EXPECT_EQ(etcd.get(key)->value, R"({"id":4,"capabilities":{"syncedCanaries":true}})");
}

// Expected: the IP GC duty runs on the identity GC's schedule and, while this node's Nomad ID is
// unknown, neither asks Nomad nor reads etcd: the pass fails and is retried.
TEST_F(DutyAdaptersTest, IpGcWithoutThisNodesIdReadsNothing) {
  auto duty = labeler::cluster::make_ip_gc_duty(settings(), context());
  EXPECT_EQ(duty->name(), labeler::cluster::DutyName::ip_gc);
  EXPECT_EQ(duty->interval(), std::chrono::minutes{15});
  const auto reads = etcd.calls(InMemoryEtcd::Method::range);
  EXPECT_EQ(duty->run_pass(fence, {}).end, labeler::cluster::PassEnd::read_failed);
  EXPECT_EQ(etcd.calls(InMemoryEtcd::Method::range), reads);
}

}  // namespace
}  // namespace cn::testing
