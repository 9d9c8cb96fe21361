// IP GC: a lease-less ipcache entry goes after two passes only when its node is proven this
// region's and gone, or alive and its in-use report lacks the IP; leased entries (the agents')
// and anything in doubt stay.
#include "labeler/cluster/ip_gc.h"

#include <gtest/gtest.h>

#include "labeler/cluster/ip_key.h"
#include "labeler/cluster/node_reaper.h"
#include "tests/unit/cluster/cluster_test_support.h"

namespace cn::testing {
namespace {

using labeler::cluster::IpGc;
using labeler::cluster::IpGcOptions;
using labeler::cluster::IpGcReport;
using labeler::cluster::PassEnd;
using labeler::cluster::kvstore::ip_key;
using nomad::NodeStub;

// identity.IPIdentityPair as the agent marshals it.
std::string ip_pair_json(std::string_view ip, std::string_view host_ip, std::uint64_t id) {
  return std::string(R"({"IP":")") + std::string(ip) + R"(","Mask":null,"HostIP":")" +
         std::string(host_ip) + R"(","ID":)" + std::to_string(id) +
         R"(,"Key":0,"Metadata":"","K8sNamespace":"default","K8sPodName":"web"})";
}

std::string ip_gc_node_json(std::string_view name, std::string_view ip) {
  return std::string(R"({"Name":")") + std::string(name) +
         R"(","Cluster":"default","IPAddresses":[{"Type":"InternalIP","IP":")" + std::string(ip) +
         R"("},{"Type":"CiliumInternalIP","IP":"10.200.0.1"}],)" +
         R"("IPv4AllocCIDR":null,"ClusterID":0,"Source":"local"})";
}

class IpGcTest : public ClusterTest {
 protected:
  IpGcTest() {
    seed_node("local", "192.168.0.1");
    seed_node("web-1", "192.168.0.2");
  }
  void seed_node(std::string_view name, std::string_view ip) {
    must(etcd.put(labeler::cluster::kvstore::node_prefix("default") + std::string(name),
                  ip_gc_node_json(name, ip), agent_lease, far()),
         "node");
  }
  void seed_marker(std::string_view name) {
    must(etcd.put(labeler::cluster::nomad_node_marker_key("default", name),
                  labeler::cluster::nomad_node_marker_json(
                      {"id-" + std::string(name), std::string(name), "", "2026"}),
                  0, far()),
         "marker");
  }
  // Lease 0: written without a lease (what this GC collects); else the agent's.
  void seed_ip(std::string_view ip, std::string_view host, etcd::LeaseId lease = 0) {
    must(etcd.put(ip_key(ip), ip_pair_json(ip, host, 300), lease, far()), "ip key");
  }
  void seed_report(std::string_view node, const std::vector<std::string>* ips) {
    const std::string value =
        ips ? labeler::cluster::in_use_report_json(node, {300}, *ips, clock.wall_now())
            : labeler::cluster::in_use_report_json(node, {300}, clock.wall_now());
    must(etcd.put(labeler::cluster::in_use_key("default", node), value, agent_lease, far()),
         "report");
  }
  IpGc gc() {
    IpGcOptions o;
    o.local_node = "local";
    o.deletions_per_minute = 0;
    return IpGc(etcd, clock, o);
  }
  IpGcReport pass(IpGc& g, const std::vector<NodeStub>& nodes) {
    clock.advance(std::chrono::minutes{1});
    (void)etcd.keep_alive(agent_lease, far());
    return g.run_pass(nodes, fence, {});
  }
  static NodeStub node(std::string name, std::string status) {
    return NodeStub{"id-" + name, std::move(name), std::move(status)};
  }
  std::vector<NodeStub> both_ready() { return {node("local", "ready"), node("web-1", "ready")}; }
};

TEST_F(IpGcTest, ADeadEndpointsLeaselessKeyOnALiveNodeGoesAfterTwoPasses) {
  const std::vector<std::string> ips{"10.200.0.5"};
  seed_report("web-1", &ips);
  seed_ip("10.200.0.5", "192.168.0.2");  // held: in the report
  seed_ip("10.200.0.6", "192.168.0.2");  // its endpoint is gone
  auto g = gc();
  auto first = pass(g, both_ready());
  EXPECT_EQ(first.end, PassEnd::complete) << first.detail;
  EXPECT_EQ(first.in_use, 1);
  EXPECT_EQ(first.endpoint_gone, 1);
  EXPECT_EQ(first.deleted, 0);
  auto second = pass(g, both_ready());
  EXPECT_EQ(second.deleted, 1);
  EXPECT_EQ(etcd.deleted_by_txn(), std::vector<std::string>{ip_key("10.200.0.6")});
  EXPECT_TRUE(exists(ip_key("10.200.0.5")));
}

TEST_F(IpGcTest, LeasedKeysAreTheAgentsAndNeverTouched) {
  const std::vector<std::string> none;
  seed_report("web-1", &none);
  seed_ip("10.200.0.6", "192.168.0.2", agent_lease);
  auto g = gc();
  for (int i = 0; i < 3; ++i) {
    auto r = pass(g, both_ready());
    EXPECT_EQ(r.leased, 1);
    EXPECT_EQ(r.candidates, 0);
  }
  EXPECT_TRUE(exists(ip_key("10.200.0.6")));
}

TEST_F(IpGcTest, AnOldReportWithoutIpsOrNoReportIsNoProof) {
  seed_report("web-1", nullptr);  // an older labeler's report
  seed_ip("10.200.0.6", "192.168.0.2");
  seed_ip("10.200.0.7", "192.168.0.1");  // "local" wrote no report at all
  auto g = gc();
  for (int i = 0; i < 3; ++i) {
    auto r = pass(g, both_ready());
    EXPECT_EQ(r.no_report, 2);
    EXPECT_EQ(r.reports_without_ips, 1);
    EXPECT_EQ(r.candidates, 0);
  }
  EXPECT_TRUE(etcd.deleted_by_txn().empty());
}

TEST_F(IpGcTest, AGoneNodesKeysGoEvenAfterItsEntryWasReaped) {
  seed_node("web-2", "192.168.0.3");
  seed_marker("web-2");
  seed_ip("10.200.0.8", "192.168.0.3");
  auto g = gc();
  const std::vector<NodeStub> purged{node("local", "ready"), node("web-1", "ready")};
  auto first = pass(g, purged);
  EXPECT_EQ(first.node_gone, 1);
  // Node reaping deletes the entry and its marker between the passes.
  etcd.remove(labeler::cluster::kvstore::node_prefix("default") + "web-2");
  etcd.remove(labeler::cluster::nomad_node_marker_key("default", "web-2"));
  auto second = pass(g, purged);
  EXPECT_EQ(second.node_gone, 1);
  EXPECT_EQ(second.deleted, 1);
  EXPECT_FALSE(exists(ip_key("10.200.0.8")));
}

TEST_F(IpGcTest, ANodeThisRegionNeverListedOrAnUnknownHostIsNotOurs) {
  seed_node("gateway", "192.168.0.9");  // a Cilium node that never ran Nomad: no marker
  seed_ip("10.200.0.9", "192.168.0.9");
  seed_ip("10.200.0.10", "172.16.0.1");  // no entry holds this HostIP
  auto g = gc();
  for (int i = 0; i < 3; ++i) {
    auto r = pass(g, both_ready());
    EXPECT_EQ(r.not_ours, 1);
    EXPECT_EQ(r.no_owner, 1);
    EXPECT_EQ(r.candidates, 0);
  }
}

TEST_F(IpGcTest, ANodeBackFromDownKeepsItsKeys) {
  seed_marker("web-1");
  seed_ip("10.200.0.6", "192.168.0.2");
  auto g = gc();
  EXPECT_EQ(pass(g, {node("local", "ready"), node("web-1", "down")}).node_gone, 1);
  auto back = pass(g, both_ready());
  EXPECT_EQ(back.node_gone, 0);
  EXPECT_EQ(back.no_report, 1);
  EXPECT_EQ(back.deleted, 0);
}

TEST_F(IpGcTest, ADoubtfulNodeListDeletesNothing) {
  seed_ip("10.200.0.6", "192.168.0.2");
  auto g = gc();
  const auto reads = etcd.calls(InMemoryEtcd::Method::range);
  EXPECT_EQ(pass(g, {}).end, PassEnd::doubt);
  EXPECT_EQ(pass(g, {node("web-1", "down")}).end, PassEnd::doubt);
  EXPECT_EQ(etcd.calls(InMemoryEtcd::Method::range), reads);
}

TEST_F(IpGcTest, AKeyRewrittenBetweenReadAndDeleteIsRefused) {
  const std::vector<std::string> none;
  seed_report("web-1", &none);
  seed_ip("10.200.0.6", "192.168.0.2");
  auto g = gc();
  pass(g, both_ready());
  etcd.before_txn([&] { seed_ip("10.200.0.6", "192.168.0.2"); });
  auto second = pass(g, both_ready());
  EXPECT_EQ(second.refused, 1);
  EXPECT_EQ(second.deleted, 0);
  EXPECT_TRUE(exists(ip_key("10.200.0.6")));
}

TEST_F(IpGcTest, TheCapLeavesTheRestForTheNextPass) {
  const std::vector<std::string> none;
  seed_report("web-1", &none);
  for (int i = 0; i < 5; ++i) seed_ip("10.200.1." + std::to_string(i), "192.168.0.2");
  IpGcOptions o;
  o.local_node = "local";
  o.deletions_per_minute = 0;
  o.max_per_pass = 2;
  IpGc g(etcd, clock, o);
  pass(g, both_ready());
  auto second = pass(g, both_ready());
  EXPECT_EQ(second.deleted, 2);
  EXPECT_EQ(second.over_cap, 3);
  auto third = pass(g, both_ready());
  EXPECT_EQ(third.deleted, 2);
  EXPECT_EQ(pass(g, both_ready()).deleted, 1);
}

TEST_F(IpGcTest, KeysOfAnotherAddressSpaceOrShapeAreNeverTouched) {
  const std::vector<std::string> none;
  seed_report("web-1", &none);
  must(etcd.put("cilium/state/ip/v1/other/10.200.0.6", ip_pair_json("10.200.0.6", "192.168.0.2", 1),
                0, far()),
       "other");
  must(etcd.put(ip_key("10.200.0.7"), "not json", 0, far()), "bad");
  auto g = gc();
  for (int i = 0; i < 3; ++i) {
    auto r = pass(g, both_ready());
    EXPECT_EQ(r.scanned, 1);
    EXPECT_EQ(r.unknown_shape, 1);
  }
  EXPECT_TRUE(etcd.deleted_by_txn().empty());
}

TEST_F(IpGcTest, DryRunDeletesNothing) {
  const std::vector<std::string> none;
  seed_report("web-1", &none);
  seed_ip("10.200.0.6", "192.168.0.2");
  IpGcOptions o;
  o.local_node = "local";
  o.dry_run = true;
  IpGc g(etcd, clock, o);
  pass(g, both_ready());
  EXPECT_EQ(pass(g, both_ready()).would_delete, 1);
  EXPECT_EQ(etcd.calls(InMemoryEtcd::Method::txn), 0);
}

}  // namespace
}  // namespace cn::testing
