// The state file as the agent reads it: Kubernetes objects, every condition explicit.
#include "labeler/services/lb_state_document.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/unit/services/lb_service_test_support.h"

namespace cn::labeler {
namespace {

using testing::backend;
using testing::service;

TEST(LbStateDocument, NoServicesIsAnEmptyObjectNotAnEmptyFile) {
  // An empty .json file is a parse error to the agent, which then keeps its old state.
  EXPECT_EQ(render_lb_state_json({}), "{\"services\":[],\"endpoints\":[]}\n");
}

TEST(LbStateDocument, AServiceIsAClusterIpAndEachAllocationItsOwnSlice) {
  auto s = service("prod", "api", "10.96.0.2", 80,
                   {backend("a1", "10.200.0.5", 8080),
                    backend("a2", "10.200.1.7", 8080, BackendState::not_ready)});
  s.backends[0].node_name = "node-1";
  auto doc = nlohmann::json::parse(render_lb_state_json({s}));

  ASSERT_EQ(doc["services"].size(), 1u);
  const auto& svc = doc["services"][0];
  EXPECT_EQ(svc["metadata"]["name"], "api");
  EXPECT_EQ(svc["metadata"]["namespace"], "prod");
  EXPECT_EQ(svc["metadata"]["labels"]["app.kubernetes.io/managed-by"], "cilium-nomad");
  EXPECT_EQ(svc["spec"]["type"], "ClusterIP");
  EXPECT_EQ(svc["spec"]["clusterIP"], "10.96.0.2");
  EXPECT_EQ(svc["spec"]["clusterIPs"], nlohmann::json::array({"10.96.0.2"}));
  EXPECT_EQ(svc["spec"]["ipFamilies"], nlohmann::json::array({"IPv4"}));
  EXPECT_EQ(svc["spec"]["ports"],
            nlohmann::json::parse(R"([{"name":"http","protocol":"TCP","port":80}])"));

  ASSERT_EQ(doc["endpoints"].size(), 2u);
  const auto& ready = doc["endpoints"][0];
  EXPECT_EQ(ready["metadata"]["namespace"], "prod");
  EXPECT_EQ(ready["metadata"]["labels"]["kubernetes.io/service-name"], "api");
  EXPECT_EQ(ready["addressType"], "IPv4");
  EXPECT_EQ(ready["endpoints"][0]["addresses"], nlohmann::json::array({"10.200.0.5"}));
  EXPECT_EQ(ready["endpoints"][0]["conditions"],
            nlohmann::json::parse(R"({"ready":true,"serving":true,"terminating":false})"));
  EXPECT_EQ(ready["endpoints"][0]["nodeName"], "node-1");
  EXPECT_EQ(ready["ports"],
            nlohmann::json::parse(R"([{"name":"http","protocol":"TCP","port":8080}])"));
  const auto& failing = doc["endpoints"][1];
  EXPECT_EQ(failing["endpoints"][0]["conditions"],
            nlohmann::json::parse(R"({"ready":false,"serving":false,"terminating":false})"));
  EXPECT_FALSE(failing["endpoints"][0].contains("nodeName"));
  EXPECT_NE(ready["metadata"]["name"], failing["metadata"]["name"]);
}

TEST(LbStateDocument, Ipv6ServicesSayTheirFamily) {
  auto s = service("default", "api", "fd00:96::2", 80, {backend("a1", "fd00:200::5", 8080)});
  auto doc = nlohmann::json::parse(render_lb_state_json({s}));
  EXPECT_EQ(doc["services"][0]["spec"]["ipFamilies"], nlohmann::json::array({"IPv6"}));
  EXPECT_EQ(doc["services"][0]["spec"]["clusterIP"], "fd00:96::2");
  EXPECT_EQ(doc["endpoints"][0]["addressType"], "IPv6");
  EXPECT_EQ(doc["endpoints"][0]["endpoints"][0]["addresses"][0], "fd00:200::5");
}

TEST(LbStateDocument, TheSameServicesGiveTheSameBytes) {
  auto s = service("default", "api", "10.96.0.2", 80, {backend("a1", "10.200.0.5", 8080)});
  EXPECT_EQ(render_lb_state_json({s}), render_lb_state_json({s}));
}

}  // namespace
}  // namespace cn::labeler
