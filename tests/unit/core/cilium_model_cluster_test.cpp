#include <gtest/gtest.h>

#include "common/cilium/model/agent_cluster.h"

namespace cn::cilium {
namespace {

TEST(AgentCluster, ClusterIsThePrefixOfTheAbsoluteNodeName) {
  EXPECT_EQ(cluster_name_of_self("eu/node1").value_or("<error>"), "eu");
  EXPECT_EQ(cluster_name_of_self("node1").value_or("<error>"), "default");
  EXPECT_FALSE(cluster_name_of_self(""));
  EXPECT_FALSE(cluster_name_of_self("/node1"));
  EXPECT_FALSE(cluster_name_of_self("eu/"));
}

TEST(AgentCluster, ParsesHealthz) {
  auto named = parse_cluster_name(
      R"({"cilium":{"state":"Ok"},"cluster":{"ciliumHealth":{"state":"Ok"},"self":"eu/n1",
          "nodes":[{"name":"eu/n2"}]}})");
  ASSERT_TRUE(named) << named.error().message;
  EXPECT_EQ(*named, "eu");
  EXPECT_EQ(parse_cluster_name(R"({"cluster":{"self":"n1"}})").value_or("<error>"), "default");
}

TEST(AgentCluster, AnswerThatDoesNotTellIsAnError) {
  for (const char* body : {R"({"cilium":{"state":"Ok"}})", R"({"cluster":null})",
                           R"({"cluster":{}})", R"({"cluster":{"self":""}})"}) {
    auto r = parse_cluster_name(body);
    ASSERT_FALSE(r) << body;
    EXPECT_NE(r.error().message.find("cluster.self"), std::string::npos) << r.error().message;
  }
  for (const char* body : {R"({"cluster":"eu"})", R"({"cluster":{"self":7}})", "[]", "{", ""}) {
    EXPECT_FALSE(parse_cluster_name(body)) << body;
  }
}

}  // namespace
}  // namespace cn::cilium
