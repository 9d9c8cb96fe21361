// Node reaping follows Nomad's node states, after a grace, never on doubt.
#include "labeler/cluster/node_reaper.h"

#include <algorithm>

#include <gtest/gtest.h>

#include "tests/unit/cluster/cluster_test_support.h"

namespace cn::testing {
namespace {

using labeler::cluster::cilium_node_name;
using labeler::cluster::NodeNameRule;
using labeler::cluster::NodeReaper;
using labeler::cluster::NodeReaperOptions;
using labeler::cluster::NodeReapReport;
using labeler::cluster::parse_node_name_rule;
using labeler::cluster::PassEnd;
using nomad::NodeStub;

// The agent's node entry: JSON of its node type, Go field names as keys.
std::string node_json(std::string_view name, std::string_view ip,
                      std::string_view cluster = "default") {
  return std::string(R"({"Name":")") + std::string(name) + R"(","Cluster":")" +
         std::string(cluster) + R"(","IPAddresses":[{"Type":"InternalIP","IP":")" +
         std::string(ip) + R"("},{"Type":"CiliumInternalIP","IP":"10.200.0.1"}],)" +
         R"("IPv4AllocCIDR":{"IP":"10.200.0.0","Mask":"//8AAA=="},"IPv6AllocCIDR":null,)" +
         R"("IPv4HealthIP":"10.200.0.10","IPv6HealthIP":"","ClusterID":0,"Source":"local",)" +
         R"("EncryptionKey":0,"Labels":{},"Annotations":{},"NodeIdentity":0})";
}

std::string node_key(std::string_view name) {
  return labeler::cluster::kvstore::node_prefix("default") + std::string(name);
}

class NodeReaperTest : public ClusterTest {
 protected:
  NodeReaperTest() {
    // Every agent registers under its own lease; a dead one's lasts 15 min more.
    for (const char* name : {"local", "web-1", "web-2"}) seed_node(name);
  }
  void seed_node(std::string_view name) {
    must(etcd.put(node_key(name), node_json(name, "10.0.0.5"), agent_lease, far()), "node");
  }
  NodeReaperOptions options() {
    NodeReaperOptions o;
    o.local_node = "local";
    return o;
  }
  // Time passes; the agents' sessions stay alive (these tests are about Nomad's view).
  NodeReapReport pass(NodeReaper& reaper, const std::vector<NodeStub>& nodes,
                      std::chrono::seconds later = std::chrono::seconds{60}) {
    while (later.count() > 0) {
      const auto step = std::min<std::chrono::seconds>(later, std::chrono::minutes{5});
      clock.advance(step);
      later -= step;
      (void)etcd.keep_alive(agent_lease, far());
    }
    return reaper.run_pass(nodes, fence, {});
  }
  static NodeStub node(std::string name, std::string status) {
    return NodeStub{"id-" + name, std::move(name), std::move(status)};
  }
};

TEST_F(NodeReaperTest, DownLongerThanTheGraceIsReaped) {
  NodeReaper reaper(etcd, clock, options());
  const std::vector<NodeStub> nodes{node("local", "ready"), node("web-1", "down"),
                                    node("web-2", "ready")};
  auto first = pass(reaper, nodes);
  EXPECT_EQ(first.end, PassEnd::complete) << first.detail;
  EXPECT_EQ(first.scanned, 3);
  EXPECT_EQ(first.down, 1);
  EXPECT_EQ(first.alive, 2);
  EXPECT_EQ(first.waiting, 1);
  // Five minutes after this reaper first saw it down: not yet longer than the grace.
  EXPECT_EQ(pass(reaper, nodes, std::chrono::seconds{300}).deleted, 0);
  auto late = pass(reaper, nodes, std::chrono::seconds{1});
  EXPECT_EQ(late.deleted, 1);
  EXPECT_EQ(etcd.deleted_by_txn(), std::vector<std::string>{node_key("web-1")});
  EXPECT_TRUE(exists(node_key("web-2")));
}

TEST_F(NodeReaperTest, AbsentFromNomadLongerThanTheGraceIsReaped) {
  NodeReaper reaper(etcd, clock, options());
  const std::vector<NodeStub> nodes{node("local", "ready"), node("web-2", "ready")};
  auto first = pass(reaper, nodes);
  EXPECT_EQ(first.absent, 1);
  EXPECT_EQ(first.deleted, 0);
  EXPECT_EQ(pass(reaper, nodes, std::chrono::seconds{301}).deleted, 1);
  EXPECT_FALSE(exists(node_key("web-1")));
}

TEST_F(NodeReaperTest, NodesNomadListsInAnyOtherStatusAreNeverReaped) {
  NodeReaper reaper(etcd, clock, options());
  seed_node("web-3");
  const std::vector<NodeStub> nodes{node("local", "ready"), node("web-1", "initializing"),
                                    node("web-2", "disconnected"), node("web-3", "draining-v2")};
  for (int i = 0; i < 5; ++i) {
    auto report = pass(reaper, nodes, std::chrono::hours{1});
    EXPECT_EQ(report.alive, 4);
    EXPECT_EQ(report.deleted, 0);
  }
  EXPECT_EQ(etcd.calls(InMemoryEtcd::Method::txn), 0);
}

TEST_F(NodeReaperTest, NodeBackBeforeTheGraceRestartsIt) {
  NodeReaper reaper(etcd, clock, options());
  const std::vector<NodeStub> down{node("local", "ready"), node("web-1", "down"),
                                   node("web-2", "ready")};
  const std::vector<NodeStub> up{node("local", "ready"), node("web-1", "ready"),
                                 node("web-2", "ready")};
  pass(reaper, down);
  pass(reaper, up, std::chrono::seconds{240});
  EXPECT_EQ(pass(reaper, down, std::chrono::seconds{120}).deleted, 0);
  EXPECT_EQ(pass(reaper, down, std::chrono::seconds{240}).deleted, 0);
  EXPECT_EQ(pass(reaper, down, std::chrono::seconds{61}).deleted, 1);
}

TEST_F(NodeReaperTest, NoDeletionOnDoubt) {
  NodeReaper reaper(etcd, clock, options());
  const std::vector<NodeStub> without_local{node("web-2", "ready")};
  const std::vector<NodeStub> empty;
  for (const auto& nodes : {without_local, empty}) {
    for (int i = 0; i < 3; ++i) {
      auto report = pass(reaper, nodes, std::chrono::minutes{10});
      EXPECT_EQ(report.end, PassEnd::doubt);
      EXPECT_EQ(report.deleted, 0);
    }
  }
  auto unconfigured = options();
  unconfigured.local_node.clear();
  NodeReaper blind(etcd, clock, unconfigured);
  EXPECT_EQ(pass(blind, {node("web-2", "ready")}).end, PassEnd::doubt);
  // Doubt is decided before etcd is asked anything.
  EXPECT_EQ(etcd.calls(InMemoryEtcd::Method::range), 0);
  EXPECT_EQ(etcd.calls(InMemoryEtcd::Method::txn), 0);
}

TEST_F(NodeReaperTest, FailedReadDeletesNothingAndStartsNoGrace) {
  NodeReaper reaper(etcd, clock, options());
  const std::vector<NodeStub> nodes{node("local", "ready"), node("web-1", "down"),
                                    node("web-2", "ready")};
  etcd.fail_next(1, ErrorKind::transport, InMemoryEtcd::Method::range);
  EXPECT_EQ(pass(reaper, nodes).end, PassEnd::read_failed);
  EXPECT_EQ(pass(reaper, nodes, std::chrono::minutes{6}).deleted, 0);  // the grace starts here
  EXPECT_EQ(pass(reaper, nodes, std::chrono::minutes{6}).deleted, 1);
}

TEST_F(NodeReaperTest, EntriesOfUnknownShapeAreSkippedAndCounted) {
  must(etcd.put(node_key("odd"), "not json", agent_lease, far()), "odd");
  must(etcd.put(node_key("other"), node_json("someone-else", "10.0.0.9"), agent_lease, far()), "x");
  must(etcd.put(node_key("elsewhere"), node_json("elsewhere", "10.0.0.9", "east"), agent_lease,
                far()),
       "x");
  must(etcd.put(node_key("nested/deeper"), node_json("deeper", "10.0.0.9"), agent_lease, far()),
       "x");
  NodeReaper reaper(etcd, clock, options());
  const std::vector<NodeStub> nodes{node("local", "ready"), node("web-1", "ready"),
                                    node("web-2", "down")};
  pass(reaper, nodes);
  auto report = pass(reaper, nodes, std::chrono::minutes{6});
  EXPECT_EQ(report.skipped_unknown_shape, 4);
  EXPECT_EQ(report.deleted, 1);  // web-2, the others are not touched
  EXPECT_TRUE(exists(node_key("odd")));
  EXPECT_TRUE(exists(node_key("other")));
}

TEST_F(NodeReaperTest, ShortNameRuleAndNodesSharingAName) {
  EXPECT_EQ(parse_node_name_rule("short-name"), NodeNameRule::short_name);
  EXPECT_EQ(parse_node_name_rule("name"), NodeNameRule::name);
  EXPECT_FALSE(parse_node_name_rule("fqdn"));
  EXPECT_EQ(cilium_node_name("web-1.dc1.example", NodeNameRule::short_name), "web-1");
  EXPECT_EQ(cilium_node_name("web-1.dc1.example", NodeNameRule::name), "web-1.dc1.example");

  auto o = options();
  o.name_rule = NodeNameRule::short_name;
  o.local_node = "local.dc1";
  NodeReaper reaper(etcd, clock, o);
  // web-1 re-registered under a new node ID: the old one is down, the new one ready.
  const std::vector<NodeStub> nodes{node("local.dc1", "ready"), node("web-1.dc1", "down"),
                                    NodeStub{"id-new", "web-1.dc1", "ready"},
                                    node("web-2.dc1", "down")};
  pass(reaper, nodes);
  auto report = pass(reaper, nodes, std::chrono::minutes{6});
  EXPECT_EQ(report.alive, 2);
  EXPECT_EQ(report.deleted, 1);
  EXPECT_EQ(etcd.deleted_by_txn(), std::vector<std::string>{node_key("web-2")});
}

TEST_F(NodeReaperTest, DryRunDeletesNothing) {
  auto o = options();
  o.dry_run = true;
  NodeReaper reaper(etcd, clock, o);
  const std::vector<NodeStub> nodes{node("local", "ready"), node("web-1", "down")};
  pass(reaper, nodes);
  auto report = pass(reaper, nodes, std::chrono::minutes{6});
  EXPECT_EQ(report.would_delete, 2);
  EXPECT_EQ(etcd.calls(InMemoryEtcd::Method::txn), 0);
}

TEST_F(NodeReaperTest, EntryRewrittenSinceTheReadIsKeptAndFenceLossStops) {
  NodeReaper reaper(etcd, clock, options());
  const std::vector<NodeStub> nodes{node("local", "ready"), node("web-1", "down"),
                                    node("web-2", "down")};
  pass(reaper, nodes);
  // The agent on web-1 is alive after all and re-registers as the txn goes out.
  int txns = 0;
  etcd.before_txn([&] {
    if (++txns == 1) seed_node("web-1");
  });
  auto report = pass(reaper, nodes, std::chrono::minutes{6});
  EXPECT_EQ(report.refused, 1);
  EXPECT_EQ(report.deleted, 1);
  EXPECT_TRUE(exists(node_key("web-1")));
  etcd.before_txn({});
  become_leader();
  auto lost = pass(reaper, nodes);
  EXPECT_EQ(lost.end, PassEnd::fence_lost);
  EXPECT_TRUE(exists(node_key("web-1")));
}

}  // namespace
}  // namespace cn::testing
