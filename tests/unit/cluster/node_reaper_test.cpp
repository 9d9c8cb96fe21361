// Node reaping follows Nomad's node states, after a grace, never on doubt, and only for nodes
// this Nomad region has listed.
#include "labeler/cluster/node_reaper.h"

#include <algorithm>
#include <sstream>

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include "tests/unit/cluster/cluster_test_support.h"

namespace cn::testing {
namespace {

using labeler::cluster::cilium_node_name;
using labeler::cluster::NodeNameRule;
using labeler::cluster::NodeReaper;
using labeler::cluster::NodeReaperOptions;
using labeler::cluster::NodeReapReport;
using labeler::cluster::nomad_node_marker_key;
using labeler::cluster::parse_node_name_rule;
using labeler::cluster::parse_nomad_node_marker;
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

std::string marker_key(std::string_view name) {
  return nomad_node_marker_key("default", name);
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
  // The Cilium node entries the reaper deleted (its txns also delete its own markers).
  std::vector<std::string> deleted_entries() const {
    std::vector<std::string> out;
    for (const auto& key : etcd.deleted_by_txn())
      if (key.starts_with(labeler::cluster::kvstore::kNodesPrefix)) out.push_back(key);
    return out;
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
  EXPECT_EQ(deleted_entries(), std::vector<std::string>{node_key("web-1")});
  EXPECT_TRUE(exists(node_key("web-2")));
}

// Listed once (any status), then purged from Nomad: reaped after the grace, marker and all.
TEST_F(NodeReaperTest, ListedThenPurgedIsReapedAfterTheGrace) {
  NodeReaper reaper(etcd, clock, options());
  auto listed =
      pass(reaper, {node("local", "ready"), node("web-1", "ready"), node("web-2", "ready")});
  EXPECT_EQ(listed.markers_written, 3);
  auto marker = parse_nomad_node_marker(etcd.get(marker_key("web-1"))->value);
  ASSERT_TRUE(marker) << marker.error().message;
  EXPECT_EQ(marker->id, "id-web-1");
  EXPECT_EQ(marker->region, "");
  const std::vector<NodeStub> purged{node("local", "ready"), node("web-2", "ready")};
  auto first = pass(reaper, purged);
  EXPECT_EQ(first.absent, 1);
  EXPECT_EQ(first.never_listed, 0);
  EXPECT_EQ(first.deleted, 0);
  EXPECT_EQ(pass(reaper, purged, std::chrono::seconds{301}).deleted, 1);
  EXPECT_FALSE(exists(node_key("web-1")));
  EXPECT_FALSE(exists(marker_key("web-1"))) << "the marker goes with the entry it proved ours";
  EXPECT_TRUE(exists(marker_key("web-2")));
}

// A Cilium node Nomad in this region never listed (a gateway, a bare-metal host, a Kubernetes
// node, another region's node) is never deleted, however long it stays; it is counted every
// pass and logged once.
TEST_F(NodeReaperTest, NeverListedEntrySurvivesForever) {
  std::ostringstream lines;
  auto log = std::make_shared<spdlog::logger>(
      "reaper", std::make_shared<spdlog::sinks::ostream_sink_st>(lines));
  NodeReaper reaper(etcd, clock, options(), log);
  seed_node("gateway-1");
  const std::vector<NodeStub> nodes{node("local", "ready"), node("web-1", "down")};
  for (int i = 0; i < 30; ++i) {
    auto report = pass(reaper, nodes, std::chrono::hours{1});
    EXPECT_EQ(report.end, PassEnd::complete) << report.detail;
    EXPECT_EQ(report.never_listed, 2) << "web-2 and gateway-1";
  }
  EXPECT_TRUE(exists(node_key("gateway-1")));
  EXPECT_TRUE(exists(node_key("web-2")));
  EXPECT_FALSE(exists(node_key("web-1")));
  EXPECT_EQ(deleted_entries(), std::vector<std::string>{node_key("web-1")});
  EXPECT_FALSE(exists(marker_key("gateway-1")));
  std::size_t logged = 0;
  for (auto at = lines.str().find("never listed: node=gateway-1"); at != std::string::npos;
       at = lines.str().find("never listed: node=gateway-1", at + 1))
    ++logged;
  EXPECT_EQ(logged, 1U) << lines.str();
}

// The memory is in etcd: a new leader (a new reaper) knows what an old one saw listed.
TEST_F(NodeReaperTest, ANewLeaderRemembersNodesAnOldOneSawListed) {
  {
    NodeReaper old_leader(etcd, clock, options());
    pass(old_leader, {node("local", "ready"), node("web-1", "ready")});
  }
  NodeReaper reaper(etcd, clock, options());
  const std::vector<NodeStub> purged{node("local", "ready")};
  auto first = pass(reaper, purged);
  EXPECT_EQ(first.absent, 1);        // web-1: listed by the old leader
  EXPECT_EQ(first.never_listed, 1);  // web-2: never listed by anyone
  EXPECT_EQ(pass(reaper, purged, std::chrono::seconds{301}).deleted, 1);
  EXPECT_EQ(deleted_entries(), std::vector<std::string>{node_key("web-1")});
  EXPECT_TRUE(exists(node_key("web-2")));
}

// A marker another region's leader wrote proves nothing here: that region's node stays.
TEST_F(NodeReaperTest, AMarkerOfAnotherRegionProvesNothing) {
  auto east = options();
  east.region = "east";
  {
    NodeReaper east_leader(etcd, clock, east);
    pass(east_leader, {node("local", "ready"), node("web-1", "ready")});
  }
  auto west = options();
  west.region = "west";
  NodeReaper reaper(etcd, clock, west);
  for (int i = 0; i < 5; ++i) {
    auto report = pass(reaper, {node("local", "ready")}, std::chrono::hours{1});
    EXPECT_EQ(report.never_listed, 2);
    EXPECT_EQ(report.markers_removed, 0);
  }
  EXPECT_TRUE(exists(node_key("web-1")));
  EXPECT_TRUE(exists(marker_key("web-1")));
  EXPECT_TRUE(deleted_entries().empty());
}

TEST_F(NodeReaperTest, AtMostMaxPerPassDeletionsThePassAndTheRestNext) {
  std::vector<NodeStub> all{node("local", "ready")};
  for (int i = 0; i < 25; ++i) {
    const std::string name = "batch-" + std::to_string(i);
    seed_node(name);
    all.push_back(node(name, "ready"));
  }
  auto o = options();
  o.max_per_pass = 10;
  NodeReaper reaper(etcd, clock, o);
  pass(reaper, all);
  // All 25 and web-1/web-2 (never listed) vanish from Nomad at once.
  const std::vector<NodeStub> purged{node("local", "ready")};
  EXPECT_EQ(pass(reaper, purged).absent, 25);
  auto first = pass(reaper, purged, std::chrono::minutes{6});
  EXPECT_EQ(first.deleted, 10);
  EXPECT_EQ(first.over_cap, 15);
  auto second = pass(reaper, purged);
  EXPECT_EQ(second.deleted, 10);
  EXPECT_EQ(second.over_cap, 5);
  auto third = pass(reaper, purged);
  EXPECT_EQ(third.deleted, 5);
  EXPECT_EQ(third.over_cap, 0);
  EXPECT_EQ(deleted_entries().size(), 25U);
  EXPECT_TRUE(exists(node_key("web-1")));
  EXPECT_TRUE(exists(node_key("web-2")));
}

// Markers of nodes Nomad no longer lists and Cilium no longer has are our own keys to remove;
// one whose node still has an entry, or is still listed, stays.
TEST_F(NodeReaperTest, MarkersOfNodesGoneEverywhereAreRemoved) {
  NodeReaper reaper(etcd, clock, options());
  pass(reaper, {node("local", "ready"), node("web-1", "ready"), node("web-2", "ready"),
                node("never-ran-cilium", "ready")});
  EXPECT_TRUE(exists(marker_key("never-ran-cilium")));
  // web-2's agent lease expires: its entry is gone without us.
  etcd.remove(node_key("web-2"));
  auto report = pass(reaper, {node("local", "ready"), node("web-1", "ready")});
  EXPECT_EQ(report.markers_removed, 2);
  EXPECT_FALSE(exists(marker_key("web-2")));
  EXPECT_FALSE(exists(marker_key("never-ran-cilium")));
  EXPECT_TRUE(exists(marker_key("web-1")));
  EXPECT_TRUE(exists(marker_key("local")));
  EXPECT_TRUE(deleted_entries().empty());
  // A node listed down whose entry was reaped keeps a marker while Nomad still lists it.
  const std::vector<NodeStub> down{node("local", "ready"), node("web-1", "down")};
  pass(reaper, down);
  EXPECT_EQ(pass(reaper, down, std::chrono::minutes{6}).deleted, 1);
  EXPECT_EQ(pass(reaper, down).markers_written, 1);
  EXPECT_EQ(pass(reaper, {node("local", "ready")}).markers_removed, 1);
  EXPECT_FALSE(exists(marker_key("web-1")));
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
  EXPECT_TRUE(deleted_entries().empty());
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
  EXPECT_EQ(deleted_entries(), std::vector<std::string>{node_key("web-2")});
}

TEST_F(NodeReaperTest, DryRunDeletesNothing) {
  auto o = options();
  o.dry_run = true;
  NodeReaper reaper(etcd, clock, o);
  const std::vector<NodeStub> nodes{node("local", "ready"), node("web-1", "down")};
  pass(reaper, nodes);
  auto report = pass(reaper, nodes, std::chrono::minutes{6});
  EXPECT_EQ(report.would_delete, 1);  // web-1; web-2 was never listed
  EXPECT_EQ(report.never_listed, 1);
  EXPECT_EQ(etcd.calls(InMemoryEtcd::Method::txn), 0) << "no marker written either";
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
