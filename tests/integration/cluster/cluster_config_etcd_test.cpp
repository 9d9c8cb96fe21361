// The cluster-config key (labeler/cluster/cluster_config.h) against a real etcd (Debian's 3.4 on
// loopback, tests/support/etcd_server.h): the value ClusterMesh peers parse, on the leader lease,
// never over another writer's value.
#include "labeler/cluster/cluster_config.h"

#include <chrono>
#include <memory>
#include <sstream>

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include "common/etcd/curl_etcd_client.h"
#include "labeler/cluster/leader_fence.h"
#include "tests/support/etcd_server.h"

namespace cn::labeler::cluster {
namespace {

using namespace std::chrono_literals;
using cn::testing::EtcdServer;

constexpr std::string_view kClusterConfigKey = "cilium/cluster-config/default";
constexpr std::string_view kClusterConfigLeaderKey = "cilium-nomad/default/leader";

Deadline cluster_config_soon() {
  return Deadline{std::chrono::steady_clock::now() + 10s};
}

class ClusterConfigEtcdTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!EtcdServer::available()) GTEST_SKIP() << EtcdServer::kBinary << " is not installed";
    server_ = std::make_unique<EtcdServer>();
    ASSERT_TRUE(server_->started()) << server_->log();
    etcd::EtcdConfig config;
    config.source = "test";
    config.endpoints = {server_->endpoint()};
    auto client = etcd::CurlEtcdClient::create(std::move(config));
    ASSERT_TRUE(client) << client.error().message;
    client_ = std::move(*client);
    fence_ = become_leader();
    log_ = std::make_shared<spdlog::logger>(
        "cluster-config-test", std::make_shared<spdlog::sinks::ostream_sink_mt>(log_text_));
  }

  LeaderFence become_leader() {
    auto lease = client_->grant_lease(60s, cluster_config_soon());
    EXPECT_TRUE(lease) << lease.error().message;
    EXPECT_TRUE(client_->put(kClusterConfigLeaderKey, "node-1", lease->id, cluster_config_soon()));
    auto kv = get(kClusterConfigLeaderKey);
    return LeaderFence{std::string(kClusterConfigLeaderKey), kv ? kv->create_revision : 0,
                       lease->id};
  }

  std::optional<etcd::KeyValue> get(std::string_view key) {
    etcd::RangeRequest r;
    r.key = std::string(key);
    auto page = client_->range(r, cluster_config_soon());
    EXPECT_TRUE(page) << page.error().message;
    if (!page || page->kvs.empty()) return std::nullopt;
    return page->kvs.front();
  }

  ClusterConfigWriter writer(std::optional<std::uint32_t> cluster_id, bool dry_run = false) {
    ClusterConfigOptions o;
    o.cluster_id = cluster_id;
    o.max_connected_clusters = 255;
    o.dry_run = dry_run;
    return ClusterConfigWriter(*client_, clock_, o, log_);
  }

  std::size_t logged(std::string_view what) const {
    const std::string text = log_text_.str();
    std::size_t n = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
  }

  std::unique_ptr<EtcdServer> server_;
  std::unique_ptr<etcd::CurlEtcdClient> client_;
  SystemClock clock_;
  LeaderFence fence_;
  std::ostringstream log_text_;
  std::shared_ptr<spdlog::logger> log_;
};

// Expected: the JSON Go prints for {ID: 7, Capabilities: {MaxConnectedClusters: 255}}, on the
// leader lease (it goes when the lease does); a second pass finds it ours and writes nothing.
TEST_F(ClusterConfigEtcdTest, WrittenAsGoPrintsItOnTheLeaderLease) {
  auto w = writer(7);
  auto report = w.run_pass(fence_, {});
  EXPECT_EQ(report.end, PassEnd::complete) << report.detail;
  EXPECT_EQ(report.action, ClusterConfigAction::written);
  auto kv = get(kClusterConfigKey);
  ASSERT_TRUE(kv);
  EXPECT_EQ(kv->value, R"({"id":7,"capabilities":{"maxConnectedClusters":255}})");
  EXPECT_EQ(kv->lease, fence_.lease);

  auto again = w.run_pass(fence_, {});
  EXPECT_EQ(again.action, ClusterConfigAction::kept);
  EXPECT_EQ(get(kClusterConfigKey)->mod_revision, kv->mod_revision);

  ASSERT_TRUE(client_->revoke_lease(fence_.lease, cluster_config_soon()));
  EXPECT_FALSE(get(kClusterConfigKey)) << "the key lives on the leader lease";
}

// Expected: a value we would not write (here what kvstoremesh writes: synced canaries, cached),
// on its writer's lease, is left exactly as it is, logged once, and reported not ours.
TEST_F(ClusterConfigEtcdTest, AnotherWritersValueIsLeftAlone) {
  const std::string theirs =
      R"({"id":7,"capabilities":{"syncedCanaries":true,"cached":true,"maxConnectedClusters":255}})";
  auto their_lease = client_->grant_lease(60s, cluster_config_soon());
  ASSERT_TRUE(their_lease);
  ASSERT_TRUE(client_->put(kClusterConfigKey, theirs, their_lease->id, cluster_config_soon()));
  const auto before = get(kClusterConfigKey);
  auto w = writer(7);
  for (int i = 0; i < 3; ++i) {
    auto report = w.run_pass(fence_, {});
    EXPECT_EQ(report.end, PassEnd::complete) << report.detail;
    EXPECT_EQ(report.action, ClusterConfigAction::not_ours);
  }
  auto kv = get(kClusterConfigKey);
  ASSERT_TRUE(kv);
  EXPECT_EQ(kv->value, theirs);
  EXPECT_EQ(kv->lease, their_lease->id);
  EXPECT_EQ(kv->mod_revision, before->mod_revision);
  EXPECT_EQ(logged("held by another writer"), 1U) << log_text_.str();

  // Once they let it go (their lease ends), the next pass writes ours.
  ASSERT_TRUE(client_->revoke_lease(their_lease->id, cluster_config_soon()));
  EXPECT_EQ(w.run_pass(fence_, {}).action, ClusterConfigAction::written);
  EXPECT_EQ(get(kClusterConfigKey)->lease, fence_.lease);
}

// Expected: our own value left on another lease (a former leader's) is moved onto this leader's
// lease, so it does not vanish with the old one.
TEST_F(ClusterConfigEtcdTest, OurValueOnAFormerLeadersLeaseMovesOntoOurs) {
  auto old_lease = client_->grant_lease(60s, cluster_config_soon());
  ASSERT_TRUE(old_lease);
  ASSERT_TRUE(client_->put(kClusterConfigKey, cluster_config_value(7, 255), old_lease->id,
                           cluster_config_soon()));
  auto w = writer(7);
  EXPECT_EQ(w.run_pass(fence_, {}).action, ClusterConfigAction::written);
  EXPECT_EQ(get(kClusterConfigKey)->lease, fence_.lease);
}

// Expected: a key that disappears (deleted, or its lease lost) is written again by the next pass.
TEST_F(ClusterConfigEtcdTest, RewrittenAfterTheKeyDisappears) {
  auto w = writer(7);
  ASSERT_EQ(w.run_pass(fence_, {}).action, ClusterConfigAction::written);
  etcd::TxnRequest del;
  del.success.push_back(
      etcd::TxnOp{etcd::TxnOp::Kind::delete_range, std::string(kClusterConfigKey), {}, {}, 0});
  ASSERT_TRUE(client_->txn(del, cluster_config_soon()));
  ASSERT_FALSE(get(kClusterConfigKey));
  auto report = w.run_pass(fence_, {});
  EXPECT_EQ(report.action, ClusterConfigAction::written);
  auto kv = get(kClusterConfigKey);
  ASSERT_TRUE(kv);
  EXPECT_EQ(kv->value, cluster_config_value(7, 255));
  EXPECT_EQ(kv->lease, fence_.lease);
}

// Expected: no cluster ID (unset, or 0: no ClusterMesh) writes nothing and says so once.
TEST_F(ClusterConfigEtcdTest, NothingWithoutAClusterId) {
  for (std::optional<std::uint32_t> id : {std::optional<std::uint32_t>{}, std::optional{0U}}) {
    auto w = writer(id);
    for (int i = 0; i < 3; ++i) {
      auto report = w.run_pass(fence_, {});
      EXPECT_EQ(report.end, PassEnd::complete);
      EXPECT_EQ(report.action, ClusterConfigAction::none);
    }
    EXPECT_FALSE(get(kClusterConfigKey));
  }
  EXPECT_EQ(logged("no cluster ID"), 2U) << "once per writer: " << log_text_.str();
}

// Expected: a dry run reads, says what it would write, and writes nothing.
TEST_F(ClusterConfigEtcdTest, DryRunWritesNothing) {
  auto w = writer(7, /*dry_run=*/true);
  auto report = w.run_pass(fence_, {});
  EXPECT_EQ(report.end, PassEnd::complete);
  EXPECT_EQ(report.action, ClusterConfigAction::would_write);
  EXPECT_FALSE(get(kClusterConfigKey));
  EXPECT_EQ(logged("would write"), 1U);
}

// Expected: a labeler that is no longer the leader writes nothing and its pass says so.
TEST_F(ClusterConfigEtcdTest, LostFenceWritesNothing) {
  etcd::TxnRequest del;
  del.success.push_back(etcd::TxnOp{
      etcd::TxnOp::Kind::delete_range, std::string(kClusterConfigLeaderKey), {}, {}, 0});
  ASSERT_TRUE(client_->txn(del, cluster_config_soon()));
  auto w = writer(7);
  auto report = w.run_pass(fence_, {});
  EXPECT_EQ(report.end, PassEnd::fence_lost);
  EXPECT_FALSE(get(kClusterConfigKey));
}

}  // namespace
}  // namespace cn::labeler::cluster
