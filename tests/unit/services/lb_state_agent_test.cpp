// What the labeler writes, read by the fake agent exactly as each release reads it
// (tests/fakes/cilium/lb_state_file.h): every file is accepted whole, the VIP is a ClusterIP
// frontend on every release, and an instance whose checks fail takes no new connections.
#include <gtest/gtest.h>

#include "labeler/services/lb_service_check.h"
#include "labeler/services/lb_state_document.h"
#include "tests/fakes/cilium/lb_state_file.h"
#include "tests/unit/services/lb_service_test_support.h"

namespace cn::labeler {
namespace {

using fakes::cilium::LbEmulation;
using fakes::cilium::LbFileFormat;
using fakes::cilium::parse_lb_state_file;
using testing::backend;
using testing::service;

struct Release {
  int minor;
  int patch;
  const char* failing_state;  // what a not-ready backend becomes; "" = dropped
};

class LbStateAgentTest : public ::testing::TestWithParam<Release> {};

TEST_P(LbStateAgentTest, TheAgentTakesTheFileAndServesTheVip) {
  const Release r = GetParam();
  auto api = service("prod", "api", "10.96.0.2", 80,
                     {backend("a1", "10.200.0.5", 8080),
                      backend("a2", "10.200.1.7", 8080, BackendState::not_ready)});
  auto web = service("prod", "web", "fd00:96::3", 443, {backend("a3", "fd00:200::9", 8443)});
  auto checked = check_lb_services({api, web}, {});
  ASSERT_TRUE(checked.problems.empty());
  LbEmulation emulation;
  emulation.minor = r.minor;
  emulation.patch = r.patch;
  emulation.ipv6 = true;
  auto table = parse_lb_state_file(render_lb_state_json(checked.services), LbFileFormat::json_file,
                                   emulation);
  ASSERT_TRUE(table) << table.error().message;

  auto fronts = table->frontends_of("prod/api");
  ASSERT_EQ(fronts.size(), 1u);
  EXPECT_EQ(fronts[0]->type, "ClusterIP");
  EXPECT_EQ(fronts[0]->address, "10.96.0.2");
  EXPECT_EQ(fronts[0]->port, 80);
  EXPECT_EQ(fronts[0]->protocol, "TCP");
  std::map<std::string, std::string> states;
  for (const auto& b : fronts[0]->backends) states[b.address] = b.state;
  EXPECT_EQ(states.at("10.200.0.5"), "active");
  if (std::string(r.failing_state).empty()) {
    EXPECT_FALSE(states.contains("10.200.1.7"));
  } else {
    EXPECT_EQ(states.at("10.200.1.7"), r.failing_state);
  }

  auto v6 = table->frontends_of("prod/web");
  ASSERT_EQ(v6.size(), 1u);
  EXPECT_EQ(v6[0]->address, "fd00:96::3");
  ASSERT_EQ(v6[0]->backends.size(), 1u);
  EXPECT_EQ(v6[0]->backends[0].port, 8443);
}

TEST_P(LbStateAgentTest, NoServicesClearsTheAgentsTable) {
  LbEmulation emulation;
  emulation.minor = GetParam().minor;
  emulation.patch = GetParam().patch;
  auto table = parse_lb_state_file(render_lb_state_json({}), LbFileFormat::json_file, emulation);
  ASSERT_TRUE(table) << table.error().message;
  EXPECT_TRUE(table->services.empty());
  EXPECT_TRUE(table->frontends.empty());
}

// 1.18.0-1.18.4 drop a backend that is neither ready nor serving; from 1.18.5 it is kept in
// maintenance (pkg/loadbalancer/reflectors/conversions.go in cilium/cilium).
INSTANTIATE_TEST_SUITE_P(Releases, LbStateAgentTest,
                         ::testing::Values(Release{18, 0, ""}, Release{18, 5, "maintenance"},
                                           Release{19, 4, "maintenance"},
                                           Release{19, 5, "maintenance"},
                                           Release{20, 0, "maintenance"}),
                         [](const auto& param_info) {
                           return "v1_" + std::to_string(param_info.param.minor) + "_" +
                                  std::to_string(param_info.param.patch);
                         });

}  // namespace
}  // namespace cn::labeler
