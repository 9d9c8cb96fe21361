// The identity GC's duplicate rule and the IP GC against a real etcd (Debian's 3.4 on loopback,
// tests/support/etcd_server.h), seeded as the agents write: master keys without a lease, value
// keys, node entries and ipcache entries on the agent's lease, the labelers' in-use reports on
// theirs. What matters here is etcd's own behaviour: the range compares of the delete txns, the
// lease field of what a range returns, one revision for every page.
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "common/etcd/curl_etcd_client.h"
#include "labeler/cluster/identity_gc.h"
#include "labeler/cluster/identity_range.h"
#include "labeler/cluster/in_use_report.h"
#include "labeler/cluster/ip_gc.h"
#include "labeler/cluster/ip_key.h"
#include "labeler/cluster/kvstore_layout.h"
#include "labeler/cluster/leader_fence.h"
#include "labeler/cluster/node_reaper.h"
#include "tests/support/etcd_server.h"

namespace cn::labeler::cluster {
namespace {

using namespace std::chrono_literals;
using cn::testing::EtcdServer;

constexpr std::string_view kGcRulesLeaderKey = "cilium-nomad/default/leader";
constexpr std::string_view kGcRulesFoo = "k8s:app=foo;k8s:io.kubernetes.pod.namespace=default;";
constexpr std::string_view kGcRulesBar = "k8s:app=bar;k8s:io.kubernetes.pod.namespace=default;";

Deadline gc_rules_soon() {
  return Deadline{std::chrono::steady_clock::now() + 10s};
}

// The real client, with a hook run once before the next txn: a write that lands between a
// pass's reads and its delete, so that etcd's own compares decide.
class GcRulesBeforeTxn final : public etcd::EtcdApi {
 public:
  explicit GcRulesBeforeTxn(etcd::EtcdApi& inner) : inner_(inner) {}
  std::function<void()> hook;
  Result<etcd::RangePage> range(const etcd::RangeRequest& r, Deadline d) override {
    return inner_.range(r, d);
  }
  Result<etcd::TxnResult> txn(const etcd::TxnRequest& r, Deadline d) override {
    if (auto h = std::exchange(hook, {})) h();
    return inner_.txn(r, d);
  }
  Result<etcd::Revision> put(std::string_view k, std::string_view v, etcd::LeaseId l,
                             Deadline d) override {
    return inner_.put(k, v, l, d);
  }
  Result<etcd::Lease> grant_lease(std::chrono::seconds ttl, Deadline d) override {
    return inner_.grant_lease(ttl, d);
  }
  Result<std::chrono::seconds> keep_alive(etcd::LeaseId l, Deadline d) override {
    return inner_.keep_alive(l, d);
  }
  Status revoke_lease(etcd::LeaseId l, Deadline d) override { return inner_.revoke_lease(l, d); }
  std::string describe() const override { return inner_.describe(); }

 private:
  etcd::EtcdApi& inner_;
};

class GcRulesEtcdTest : public ::testing::Test {
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
    auto leader_lease = client_->grant_lease(600s, gc_rules_soon());
    ASSERT_TRUE(leader_lease) << leader_lease.error().message;
    put(kGcRulesLeaderKey, "node-1", leader_lease->id);
    fence_ = LeaderFence{std::string(kGcRulesLeaderKey), get(kGcRulesLeaderKey)->create_revision,
                         leader_lease->id};
    auto agent = client_->grant_lease(900s, gc_rules_soon());  // kvstore-lease-ttl
    ASSERT_TRUE(agent) << agent.error().message;
    agent_lease_ = agent->id;
  }

  void put(std::string_view key, std::string_view value, etcd::LeaseId lease = 0) {
    auto r = client_->put(key, value, lease, gc_rules_soon());
    ASSERT_TRUE(r) << key << ": " << r.error().message;
  }
  std::optional<etcd::KeyValue> get(std::string_view key) {
    etcd::RangeRequest r;
    r.key = std::string(key);
    auto page = client_->range(r, gc_rules_soon());
    EXPECT_TRUE(page) << page.error().message;
    if (!page || page->kvs.empty()) return std::nullopt;
    return page->kvs.front();
  }
  bool exists(std::string_view key) { return get(key).has_value(); }

  // The agent's writes.
  void identity(std::uint64_t id, std::string_view labels) {
    put(kvstore::master_key(id), labels);  // create-only, no lease
  }
  void user(std::string_view labels, std::string_view node_ip, std::uint64_t id) {
    put(kvstore::value_key_prefix(labels) + std::string(node_ip), std::to_string(id), agent_lease_);
  }
  void node(std::string_view name, std::string_view ip) {
    put(kvstore::node_prefix("default") + std::string(name),
        std::string(R"({"Name":")") + std::string(name) +
            R"(","Cluster":"default","IPAddresses":[{"Type":"InternalIP","IP":")" +
            std::string(ip) + R"("}],"IPv4AllocCIDR":null,"ClusterID":0,"Source":"local"})",
        agent_lease_);
  }
  static std::string ip_pair(std::string_view ip, std::string_view host) {
    return std::string(R"({"IP":")") + std::string(ip) + R"(","Mask":null,"HostIP":")" +
           std::string(host) +
           R"(","ID":300,"Key":0,"Metadata":"","K8sNamespace":"default","K8sPodName":"web"})";
  }
  // Lease 0: without a lease, as a migration copies it; else the agent's.
  void ip(std::string_view address, std::string_view host, etcd::LeaseId lease = 0) {
    put(kvstore::ip_key(address), ip_pair(address, host), lease);
  }

  static nomad::NodeStub nomad_node(std::string name, std::string status) {
    return nomad::NodeStub{"id-" + name, std::move(name), std::move(status)};
  }

  std::unique_ptr<EtcdServer> server_;
  std::unique_ptr<etcd::CurlEtcdClient> client_;
  SystemClock clock_;
  LeaderFence fence_;
  etcd::LeaseId agent_lease_ = 0;
};

TEST_F(GcRulesEtcdTest, TheUnusedDuplicateGoesTheUsedOneAndAUsedDuplicateStay) {
  identity(256, kGcRulesFoo);
  identity(257, kGcRulesFoo);  // the unused duplicate: both nodes use 256
  user(kGcRulesFoo, "192.168.0.1", 256);
  user(kGcRulesFoo, "192.168.0.2", 256);
  identity(300, kGcRulesBar);
  identity(301, kGcRulesBar);  // both used: node 1 uses 300, node 2 uses 301
  user(kGcRulesBar, "192.168.0.1", 300);
  user(kGcRulesBar, "192.168.0.2", 301);
  IdentityGcOptions o;
  o.deletions_per_minute = 0;
  o.range = identity_range(0, 255);
  IdentityGc gc(*client_, clock_, o);
  auto first = gc.run_pass(fence_, {});
  ASSERT_EQ(first.end, PassEnd::complete) << first.detail;
  EXPECT_EQ(first.duplicate_candidates, 1);
  EXPECT_EQ(first.referenced, 3);
  auto second = gc.run_pass(fence_, {});
  ASSERT_EQ(second.end, PassEnd::complete) << second.detail;
  EXPECT_EQ(second.deleted_duplicates, 1);
  EXPECT_FALSE(exists(kvstore::master_key(257)));
  for (std::uint64_t id : {256, 300, 301}) EXPECT_TRUE(exists(kvstore::master_key(id))) << id;
}

TEST_F(GcRulesEtcdTest, EtcdRefusesTheDuplicatesDeleteOnceANodeNamesIt) {
  identity(256, kGcRulesFoo);
  identity(257, kGcRulesFoo);
  user(kGcRulesFoo, "192.168.0.1", 256);
  IdentityGcOptions o;
  o.deletions_per_minute = 0;
  o.range = identity_range(0, 255);
  GcRulesBeforeTxn etcd(*client_);
  IdentityGc gc(etcd, clock_, o);
  ASSERT_EQ(gc.run_pass(fence_, {}).duplicate_candidates, 1);
  // A node starts using 257 after the second pass read the store: only etcd's compare over
  // `value/<labels>/` (every key's value differs from "257") stands in the way.
  etcd.hook = [&] { user(kGcRulesFoo, "192.168.0.3", 257); };
  auto second = gc.run_pass(fence_, {});
  EXPECT_EQ(second.end, PassEnd::complete) << second.detail;
  EXPECT_EQ(second.refused, 1);
  EXPECT_EQ(second.deleted, 0);
  EXPECT_TRUE(exists(kvstore::master_key(257)));
}

TEST_F(GcRulesEtcdTest, EtcdRefusesTheDuplicatesDeleteWhenItsStringLostEveryUser) {
  identity(256, kGcRulesFoo);
  identity(257, kGcRulesFoo);
  user(kGcRulesFoo, "192.168.0.1", 256);
  IdentityGcOptions o;
  o.deletions_per_minute = 0;
  o.range = identity_range(0, 255);
  GcRulesBeforeTxn etcd(*client_);
  IdentityGc gc(etcd, clock_, o);
  ASSERT_EQ(gc.run_pass(fence_, {}).duplicate_candidates, 1);
  // The only user's agent dies: a value compare over an empty range fails in etcd 3.4.
  etcd.hook = [&] { ASSERT_TRUE(client_->revoke_lease(agent_lease_, gc_rules_soon())); };
  auto second = gc.run_pass(fence_, {});
  EXPECT_EQ(second.refused, 1);
  EXPECT_TRUE(exists(kvstore::master_key(257)));
}

TEST_F(GcRulesEtcdTest, IpGcCollectsOnlyProvenStaleLeaselessEntries) {
  node("local", "192.168.0.1");
  node("web-1", "192.168.0.2");
  node("web-2", "192.168.0.3");    // Nomad reports it down; a marker says it is ours
  node("gateway", "192.168.0.9");  // never ran Nomad
  put(nomad_node_marker_key("default", "web-2"),
      nomad_node_marker_json({"id-web-2", "web-2", "", "2026-12-03T16:00:00Z"}));
  // web-1's labeler reports its endpoints' IPs; local's is an older labeler's report.
  put(in_use_key("default", "web-1"),
      in_use_report_json("web-1", {300}, std::vector<std::string>{"10.200.1.5"}, clock_.wall_now()),
      agent_lease_);
  put(in_use_key("default", "local"), in_use_report_json("local", {300}, clock_.wall_now()),
      agent_lease_);
  ip("10.200.1.5", "192.168.0.2");                // live, in web-1's report
  ip("10.200.1.6", "192.168.0.2");                // web-1's dead endpoint
  ip("10.200.1.7", "192.168.0.2", agent_lease_);  // dead too, but on the agent's lease
  ip("10.200.2.5", "192.168.0.3");                // the gone node's
  ip("10.200.0.5", "192.168.0.1");                // local's: its old report proves nothing
  ip("10.200.9.5", "192.168.0.9");                // the gateway's: not ours
  put("cilium/state/ip/v1/other/10.200.1.6", ip_pair("10.200.1.6", "192.168.0.2"));

  IpGcOptions o;
  o.local_node = "local";
  o.deletions_per_minute = 0;
  IpGc gc(*client_, clock_, o);
  const std::vector<nomad::NodeStub> nodes{
      nomad_node("local", "ready"), nomad_node("web-1", "ready"), nomad_node("web-2", "down")};
  auto first = gc.run_pass(nodes, fence_, {});
  ASSERT_EQ(first.end, PassEnd::complete) << first.detail;
  EXPECT_EQ(first.scanned, 6);
  EXPECT_EQ(first.leased, 1);
  EXPECT_EQ(first.in_use, 1);
  EXPECT_EQ(first.endpoint_gone, 1);
  EXPECT_EQ(first.node_gone, 1);
  EXPECT_EQ(first.no_report, 1);
  EXPECT_EQ(first.not_ours, 1);
  EXPECT_EQ(first.reports_without_ips, 1);
  EXPECT_EQ(first.deleted, 0);
  auto second = gc.run_pass(nodes, fence_, {});
  ASSERT_EQ(second.end, PassEnd::complete) << second.detail;
  EXPECT_EQ(second.deleted, 2);
  EXPECT_FALSE(exists(kvstore::ip_key("10.200.1.6")));
  EXPECT_FALSE(exists(kvstore::ip_key("10.200.2.5")));
  for (const char* kept : {"10.200.1.5", "10.200.1.7", "10.200.0.5", "10.200.9.5"})
    EXPECT_TRUE(exists(kvstore::ip_key(kept))) << kept;
  EXPECT_TRUE(exists("cilium/state/ip/v1/other/10.200.1.6"));
}

TEST_F(GcRulesEtcdTest, AnIpEntryRewrittenWithALeaseBetweenPassesIsKept) {
  node("local", "192.168.0.1");
  node("web-1", "192.168.0.2");
  put(in_use_key("default", "web-1"),
      in_use_report_json("web-1", {}, std::vector<std::string>{}, clock_.wall_now()), agent_lease_);
  ip("10.200.1.6", "192.168.0.2");
  IpGcOptions o;
  o.local_node = "local";
  o.deletions_per_minute = 0;
  IpGc gc(*client_, clock_, o);
  const std::vector<nomad::NodeStub> nodes{nomad_node("local", "ready"),
                                           nomad_node("web-1", "ready")};
  ASSERT_EQ(gc.run_pass(nodes, fence_, {}).endpoint_gone, 1);
  ip("10.200.1.6", "192.168.0.2", agent_lease_);  // the agent took it back on its lease
  auto second = gc.run_pass(nodes, fence_, {});
  EXPECT_EQ(second.leased, 1);
  EXPECT_EQ(second.deleted, 0);
  EXPECT_TRUE(exists(kvstore::ip_key("10.200.1.6")));
}

}  // namespace
}  // namespace cn::labeler::cluster
