// One pass of the services feature on two nodes against one fake Nomad: the same VIP on both,
// health from each node's own checks reaching the other, instances leaving, restarts, and a
// Nomad that cannot be reached leaving the file alone.
#include "labeler/services/services_sync.h"

#include <gtest/gtest.h>

#include <set>

#include <nlohmann/json.hpp>

#include "common/util/read_whole_file.h"
#include "tests/fakes/cilium/lb_state_file.h"
#include "tests/fakes/nomad/fake_nomad.h"
#include "tests/support/manual_clock.h"
#include "tests/support/temp_dir.h"
#include "tests/unit/services/two_node_cluster.h"

namespace cn::labeler {
namespace {

using namespace std::chrono_literals;

using testing::kNode1;
using testing::kNode2;

using Node = testing::SyncNode;

class ServicesSyncTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto cluster = testing::start_two_node_cluster();
    fake_ = std::move(cluster.nomad);
    alloc1_ = cluster.alloc1;
    alloc2_ = cluster.alloc2;
    node1_ = std::make_unique<Node>(fake_->address(), range_, clock_, kNode1, file1());
    node2_ = std::make_unique<Node>(fake_->address(), range_, clock_, kNode2, file2());
  }
  void TearDown() override { fake_->stop(); }

  std::string file1() const { return dir_.path() + "/node1.json"; }
  std::string file2() const { return dir_.path() + "/node2.json"; }
  static nlohmann::json read(const std::string& path) {
    auto text = read_whole_file(path, 1 << 20);
    EXPECT_TRUE(text) << path;
    return nlohmann::json::parse(text.value_or("{}"));
  }
  // Both nodes pass twice, so each has read the report the other published.
  void settle() {
    for (int i = 0; i < 2; ++i) {
      ASSERT_TRUE(node1_->pass());
      ASSERT_TRUE(node2_->pass());
    }
  }
  // address -> ready, from a state file's slices.
  static std::map<std::string, bool> backends(const nlohmann::json& doc) {
    std::map<std::string, bool> out;
    for (const auto& slice : doc["endpoints"]) {
      out[slice["endpoints"][0]["addresses"][0]] = slice["endpoints"][0]["conditions"]["ready"];
    }
    return out;
  }

  cn::testing::TempDir dir_;
  ManualClock clock_;
  VipRange range_ = *VipRange::parse("10.96.0.0/16");
  std::unique_ptr<fakes::FakeNomad> fake_;
  std::string alloc1_;
  std::string alloc2_;
  std::unique_ptr<Node> node1_;
  std::unique_ptr<Node> node2_;
};

TEST_F(ServicesSyncTest, BothNodesWriteTheSameFileWithEachInstancesOwnHealth) {
  ASSERT_TRUE(fake_->set_check_status(alloc1_, "api-alive", "success"));
  ASSERT_TRUE(fake_->set_check_status(alloc2_, "api-alive", "failure"));
  settle();
  auto doc1 = read(file1());
  EXPECT_EQ(doc1, read(file2()));
  ASSERT_EQ(doc1["services"].size(), 1u);
  EXPECT_EQ(doc1["services"][0]["metadata"]["name"], "api");
  EXPECT_EQ(doc1["services"][0]["spec"]["clusterIP"], ip_text(range_.choice("default", "api", 0)));
  EXPECT_EQ(doc1["services"][0]["spec"]["ports"][0]["port"], 8080);
  EXPECT_EQ(backends(doc1),
            (std::map<std::string, bool>{{"10.200.1.5", true}, {"10.200.2.5", false}}));
}

TEST_F(ServicesSyncTest, ACheckTurningAndAnInstanceLeavingReachTheFile) {
  ASSERT_TRUE(fake_->set_check_status(alloc1_, "api-alive", "success"));
  ASSERT_TRUE(fake_->set_check_status(alloc2_, "api-alive", "success"));
  settle();
  EXPECT_EQ(backends(read(file1())),
            (std::map<std::string, bool>{{"10.200.1.5", true}, {"10.200.2.5", true}}));
  // Node 2's instance fails its check: node 2 reports it, node 1 reads the report.
  ASSERT_TRUE(fake_->set_check_status(alloc2_, "api-alive", "failure"));
  settle();
  EXPECT_EQ(backends(read(file1())),
            (std::map<std::string, bool>{{"10.200.1.5", true}, {"10.200.2.5", false}}));
  // Node 1's instance deregisters (Nomad does this first when it stops an allocation).
  ASSERT_TRUE(fake_->deregister_services(alloc1_));
  settle();
  EXPECT_EQ(backends(read(file2())), (std::map<std::string, bool>{{"10.200.2.5", false}}));
}

TEST_F(ServicesSyncTest, ARestartKeepsTheVipAndAnUnchangedPassWritesNothing) {
  settle();
  const auto vip = read(file1())["services"][0]["spec"]["clusterIP"];
  auto pass = node1_->pass();
  ASSERT_TRUE(pass);
  EXPECT_FALSE(pass->lb_written);
  node1_ = std::make_unique<Node>(fake_->address(), range_, clock_, kNode1, file1());
  ASSERT_TRUE(node1_->pass());
  EXPECT_EQ(read(file1())["services"][0]["spec"]["clusterIP"], vip);
}

// Nomad refuses a variable over 64 KiB: a node with many instances publishes its report in
// parts, the other nodes read them all, and parts no longer needed are deleted.
TEST_F(ServicesSyncTest, ALargeReportIsPublishedInPartsAndShrinksBack) {
  std::vector<std::string> extra;
  for (int i = 0; i < 400; ++i) {
    const std::string ip = "10.201." + std::to_string(i / 200) + "." + std::to_string(i % 200 + 1);
    extra.push_back(testing::place_api_instance(*fake_, kNode1, ip.c_str()));
  }
  settle();
  const auto parts = [&] {
    auto listed = node2_->client->variables("default", "cilium-nomad/services/nodes/", 0,
                                            std::chrono::seconds{0}, system_clock().now() + 10s);
    EXPECT_TRUE(listed) << listed.error().message;
    std::set<std::string> paths;
    if (listed) {
      for (const auto& meta : listed->value) paths.insert(meta.path);
    }
    return paths;
  };
  const std::string base = std::string("cilium-nomad/services/nodes/") + kNode1;
  EXPECT_TRUE(parts().contains(base + "/1")) << "400 instances need a second part";
  EXPECT_EQ(read(file2())["endpoints"].size(), 402u) << "node 2 reads every part";
  for (const auto& id : extra) ASSERT_TRUE(fake_->deregister_services(id));
  settle();
  EXPECT_TRUE(parts().contains(base));
  EXPECT_FALSE(parts().contains(base + "/1")) << "the part no longer needed is deleted";
  EXPECT_EQ(read(file2())["endpoints"].size(), 2u);
}

TEST_F(ServicesSyncTest, JobsFindTheVipInAVariableInTheServicesNamespace) {
  settle();
  auto var = node2_->client->variable("default", "cilium-nomad/vip/api",
                                      Deadline{system_clock().now() + 10s});
  ASSERT_TRUE(var) << var.error().message;
  EXPECT_EQ(var->items["vip"], read(file1())["services"][0]["spec"]["clusterIP"]);
  EXPECT_EQ(var->items["port_http"], "8080");
  EXPECT_EQ(var->items["service"], "default/api");
}

TEST_F(ServicesSyncTest, NomadUnreachableLeavesTheFileAsItWas) {
  settle();
  const std::string before = *read_whole_file(file1(), 1 << 20);
  fake_->stop();
  auto pass = node1_->pass();
  ASSERT_FALSE(pass);
  EXPECT_EQ(*read_whole_file(file1(), 1 << 20), before);
}

}  // namespace
}  // namespace cn::labeler
