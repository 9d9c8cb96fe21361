// cilium/.heartbeat: Go's RFC 3339 time, leased, fenced.
#include "labeler/cluster/heartbeat.h"

#include <regex>

#include <gtest/gtest.h>

#include "tests/unit/cluster/cluster_test_support.h"

namespace cn::testing {
namespace {

using labeler::cluster::heartbeat_value;
using labeler::cluster::HeartbeatOptions;
using labeler::cluster::HeartbeatWriter;
using labeler::cluster::PassEnd;
using labeler::cluster::kvstore::kHeartbeatKey;

TEST(HeartbeatValue, IsGoTimeRfc3339InUtc) {
  using namespace std::chrono;
  const WallTime t = sys_days{2026y / December / 2} + 3h + 4min + 5s + 678ms;
  EXPECT_EQ(heartbeat_value(t), "2026-12-02T03:04:05Z");
  EXPECT_EQ(heartbeat_value(WallTime{}), "1970-01-01T00:00:00Z");
}

class HeartbeatTest : public ClusterTest {};

TEST_F(HeartbeatTest, WritesTheKeyUnderTheLeaseItIsGiven) {
  const auto lease = must(etcd.grant_lease(std::chrono::seconds{60}, far()), "lease").id;
  HeartbeatWriter writer(etcd, clock, {});
  auto report = writer.write(fence, lease, {});
  EXPECT_EQ(report.end, PassEnd::complete) << report.detail;
  EXPECT_TRUE(report.written);
  auto kv = etcd.get(kHeartbeatKey);
  ASSERT_TRUE(kv);
  EXPECT_EQ(kv->value, report.value);
  EXPECT_TRUE(std::regex_match(kv->value, std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)")))
      << kv->value;
  EXPECT_EQ(kv->value, heartbeat_value(clock.wall_now()));
  EXPECT_EQ(kv->lease, lease);
  EXPECT_EQ(kv->mod_revision, report.revision);

  // A minute later, the next write moves it on; without writes, the lease takes it away.
  clock.advance(std::chrono::seconds{59});
  ASSERT_TRUE(etcd.keep_alive(lease, far()));
  EXPECT_TRUE(writer.write(fence, lease, {}).written);
  EXPECT_EQ(etcd.get(kHeartbeatKey)->version, 2);
  clock.advance(std::chrono::seconds{60});
  EXPECT_FALSE(etcd.get(kHeartbeatKey));
}

TEST_F(HeartbeatTest, FenceLostWritesNothing) {
  const auto old = fence;
  become_leader();
  HeartbeatWriter writer(etcd, clock, {});
  auto report = writer.write(old, old.lease, {});
  EXPECT_EQ(report.end, PassEnd::fence_lost);
  EXPECT_FALSE(report.written);
  EXPECT_FALSE(etcd.get(kHeartbeatKey));
}

TEST_F(HeartbeatTest, DryRunWritesNothing) {
  HeartbeatOptions options;
  options.dry_run = true;
  HeartbeatWriter writer(etcd, clock, options);
  auto report = writer.write(fence, fence.lease, {});
  EXPECT_FALSE(report.written);
  EXPECT_EQ(report.value, heartbeat_value(clock.wall_now()));
  EXPECT_EQ(etcd.total_calls() - etcd.calls(InMemoryEtcd::Method::put) -
                etcd.calls(InMemoryEtcd::Method::grant_lease),
            0);
}

TEST_F(HeartbeatTest, EtcdErrorIsReported) {
  etcd.fail_next(1, ErrorKind::timeout, InMemoryEtcd::Method::txn);
  HeartbeatWriter writer(etcd, clock, {});
  auto report = writer.write(fence, fence.lease, {});
  EXPECT_EQ(report.end, PassEnd::write_failed);
  EXPECT_FALSE(report.written);
}

}  // namespace
}  // namespace cn::testing
