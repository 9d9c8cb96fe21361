// The agent options model: GET /v1/config's daemonConfigurationMap (cilium/cilium
// daemon/cmd/config.go, getConfigHandler: option.Config by Go field name), --agent-option and
// their order of precedence.
#include <gtest/gtest.h>

#include "common/cilium/model/agent_options.h"

namespace cn::cilium {
namespace {

TEST(AgentOptions, DefaultsAreUpstreamDefaults) {
  AgentOptions o;
  EXPECT_FALSE(o.enabled(AgentOption::node_selector_labels));
  EXPECT_TRUE(o.enabled(AgentOption::l7_proxy));
  EXPECT_TRUE(o.enabled(AgentOption::icmp_rules));
  EXPECT_FALSE(o.enabled(AgentOption::host_firewall));
  EXPECT_FALSE(o.enabled(AgentOption::mesh_auth));
  EXPECT_EQ(o.get(AgentOption::l7_proxy).origin, AgentOptionOrigin::upstream_default);
}

TEST(AgentOptions, ReadsTheConfigMap) {
  auto r = parse_agent_options(
      R"({"spec":{"policy-enforcement":"default"},"status":{"daemonConfigurationMap":{
          "EnableNodeSelectorLabels":true,"EnableL7Proxy":false,"Devices":["eth0"],
          "EnableHostFirewall":null}}})");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ((*r)[static_cast<std::size_t>(AgentOption::node_selector_labels)], true);
  EXPECT_EQ((*r)[static_cast<std::size_t>(AgentOption::l7_proxy)], false);
  EXPECT_FALSE((*r)[static_cast<std::size_t>(AgentOption::icmp_rules)]);
  EXPECT_FALSE((*r)[static_cast<std::size_t>(AgentOption::host_firewall)]);
}

TEST(AgentOptions, AnOldAgentWithoutTheMapReportsNothing) {
  for (const char* body : {R"({})", R"({"status":{}})", R"({"status":null})"}) {
    auto r = parse_agent_options(body);
    ASSERT_TRUE(r) << body << ": " << r.error().message;
    for (const auto& v : *r) EXPECT_FALSE(v) << body;
  }
}

TEST(AgentOptions, BadAnswersAreErrors) {
  for (const char* body :
       {"", "[]", "nul", R"({"status":[]})", R"({"status":{"daemonConfigurationMap":"x"}})",
        R"({"status":{"daemonConfigurationMap":{"EnableL7Proxy":"true"}}})"}) {
    EXPECT_FALSE(parse_agent_options(body)) << body;
  }
}

TEST(AgentOptions, FlagWinsOverAgentWinsOverDefault) {
  ReportedAgentOptions agent{};
  ReportedAgentOptions flags{};
  agent[static_cast<std::size_t>(AgentOption::node_selector_labels)] = true;
  agent[static_cast<std::size_t>(AgentOption::l7_proxy)] = true;
  flags[static_cast<std::size_t>(AgentOption::l7_proxy)] = false;
  auto o = resolve_agent_options(agent, flags);
  EXPECT_TRUE(o.enabled(AgentOption::node_selector_labels));
  EXPECT_EQ(o.get(AgentOption::node_selector_labels).origin, AgentOptionOrigin::agent);
  EXPECT_FALSE(o.enabled(AgentOption::l7_proxy));
  EXPECT_EQ(o.get(AgentOption::l7_proxy).origin, AgentOptionOrigin::operator_flag);
  EXPECT_EQ(o.get(AgentOption::icmp_rules).origin, AgentOptionOrigin::upstream_default);
}

TEST(AgentOptions, Assignments) {
  auto a = parse_agent_option_assignment("enable-node-selector-labels=true");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->first, AgentOption::node_selector_labels);
  EXPECT_TRUE(a->second);
  for (const char* bad : {"enable-node-selector-labels", "enable-l7-proxy=yes", "enable-foo=true",
                          "=true", "enable-l7-proxy=True"}) {
    EXPECT_FALSE(parse_agent_option_assignment(bad)) << bad;
  }
}

}  // namespace
}  // namespace cn::cilium
