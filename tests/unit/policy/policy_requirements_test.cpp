// policy_requirements: one case per rule class whose agent option may be off. Each names the
// upstream check it mirrors (cilium/cilium pkg/policy/api/rule_validation.go unless noted).
#include <gtest/gtest.h>

#include <string>

#include "common/policy/policy_document.h"
#include "common/policy/policy_object.h"
#include "common/policy/policy_requirements.h"
#include "common/policy/policy_text.h"

namespace cn::policy {
namespace {

using cilium::AgentOption;
using cilium::AgentOptionOrigin;
using cilium::AgentOptions;

// Parses and validates, so every case is a policy the distributor would otherwise write.
std::vector<PolicyRequirement> needs_of(std::string_view text) {
  auto doc = parse_policy_text(text);
  EXPECT_TRUE(doc) << (doc ? "" : doc.error().message);
  if (!doc) return {};
  auto ok = validate_policy_object(*doc);
  EXPECT_TRUE(ok) << (ok ? "" : ok.error().message);
  return policy_requirements(*doc);
}

constexpr std::string_view kHead = R"({"apiVersion":"cilium.io/v2","kind":"CiliumNetworkPolicy",
  "metadata":{"name":"p","namespace":"default"},"spec":{"endpointSelector":{},)";

std::string cnp(std::string_view rest) {
  return std::string(kHead) + std::string(rest) + "}}";
}

TEST(PolicyRequirements, PlainL3L4PolicyNeedsNothing) {
  EXPECT_TRUE(needs_of(cnp(R"("ingress":[{"fromEndpoints":[{}],
      "toPorts":[{"ports":[{"port":"80","protocol":"TCP"}]}]}])"))
                  .empty());
}

// IngressCommonRule.Validate: FromNodes without EnableNodeSelectorLabels.
TEST(PolicyRequirements, FromNodesNeedsNodeSelectorLabels) {
  auto needs = needs_of(cnp(R"("ingress":[{"fromEndpoints":[{}]},
      {"fromNodes":[{"matchLabels":{"role":"db"}}]}])"));
  ASSERT_EQ(needs.size(), 1u);
  EXPECT_EQ(needs[0].option, AgentOption::node_selector_labels);
  EXPECT_EQ(needs[0].pointer, "/spec/ingress/1/fromNodes");
  EXPECT_EQ(needs[0].effect, MissingOptionEffect::fatal_at_restart);
}

// EgressCommonRule.Validate: the same for ToNodes, in a deny rule too.
TEST(PolicyRequirements, ToNodesInADenyRuleNeedsNodeSelectorLabels) {
  auto needs = needs_of(cnp(R"("egressDeny":[{"toNodes":[{}]}])"));
  ASSERT_EQ(needs.size(), 1u);
  EXPECT_EQ(needs[0].option, AgentOption::node_selector_labels);
  EXPECT_EQ(needs[0].pointer, "/spec/egressDeny/0/toNodes");
}

// IngressRule/EgressRule.Validate: L7 members without EnableL7Proxy.
TEST(PolicyRequirements, HttpRulesNeedTheL7Proxy) {
  auto needs = needs_of(cnp(R"("ingress":[{"fromEndpoints":[{}],"toPorts":[
      {"ports":[{"port":"80","protocol":"TCP"}]},
      {"ports":[{"port":"8080","protocol":"TCP"}],"rules":{"http":[{"method":"GET"}]}}]}])"));
  ASSERT_EQ(needs.size(), 1u);
  EXPECT_EQ(needs[0].option, AgentOption::l7_proxy);
  EXPECT_EQ(needs[0].pointer, "/spec/ingress/0/toPorts/1/rules");
  EXPECT_EQ(needs[0].feature, "L7 rules");
}

// An empty rules object is L7Rules.IsEmpty (pkg/policy/api/l7.go): no proxy needed.
TEST(PolicyRequirements, EmptyL7RulesNeedNothing) {
  EXPECT_TRUE(needs_of(cnp(R"("egress":[{"toEndpoints":[{}],"toPorts":[
      {"ports":[{"port":"80","protocol":"TCP"}],"rules":{"http":[]}}]}])"))
                  .empty());
}

// Ingress/Egress(Deny)Rule.Validate: ICMPs without EnableICMPRules.
TEST(PolicyRequirements, IcmpRulesNeedIcmpRules) {
  auto needs = needs_of(cnp(R"("ingressDeny":[{"fromEntities":["world"],
      "icmps":[{"fields":[{"type":8}]}]}])"));
  ASSERT_EQ(needs.size(), 1u);
  EXPECT_EQ(needs[0].option, AgentOption::icmp_rules);
  EXPECT_EQ(needs[0].pointer, "/spec/ingressDeny/0/icmps");
}

// toFQDNs: loaded without the proxy, but never allows (the DNS proxy learns the addresses).
TEST(PolicyRequirements, ToFqdnsNeedsTheDnsProxy) {
  auto needs = needs_of(cnp(R"("egress":[{"toFQDNs":[{"matchName":"example.com"}]}])"));
  ASSERT_EQ(needs.size(), 1u);
  EXPECT_EQ(needs[0].option, AgentOption::l7_proxy);
  EXPECT_EQ(needs[0].pointer, "/spec/egress/0/toFQDNs");
  EXPECT_EQ(needs[0].effect, MissingOptionEffect::not_enforced);
}

TEST(PolicyRequirements, RequiredAuthenticationNeedsMeshAuthAndAMutualHandler) {
  auto needs = needs_of(cnp(R"("ingress":[{"fromEndpoints":[{}],
      "authentication":{"mode":"required"}}])"));
  ASSERT_EQ(needs.size(), 2u);
  EXPECT_EQ(needs[0].option, AgentOption::mesh_auth);
  EXPECT_EQ(needs[1].option, AgentOption::mesh_auth_mutual);
  EXPECT_EQ(needs[0].pointer, "/spec/ingress/0/authentication/mode");
  EXPECT_TRUE(needs_of(cnp(R"("ingress":[{"fromEndpoints":[{}],
      "authentication":{"mode":"disabled"}}])"))
                  .empty());
}

TEST(PolicyRequirements, HostPolicyNeedsTheHostFirewall) {
  auto needs = needs_of(R"({"apiVersion":"cilium.io/v2","kind":"CiliumClusterwideNetworkPolicy",
      "metadata":{"name":"h"},"specs":[{"endpointSelector":{},"ingress":[{}]},
      {"nodeSelector":{},"ingress":[{"fromEntities":["cluster"]}]}]})");
  ASSERT_EQ(needs.size(), 1u);
  EXPECT_EQ(needs[0].option, AgentOption::host_firewall);
  EXPECT_EQ(needs[0].pointer, "/specs/1/nodeSelector");
}

TEST(PolicyRequirements, EachOptionOnceAtItsFirstUse) {
  auto needs = needs_of(cnp(R"("egress":[{"toNodes":[{}]},{"toNodes":[{}]},
      {"toEntities":["world"],"icmps":[{"fields":[{"type":8}]}]}])"));
  ASSERT_EQ(needs.size(), 2u);
  EXPECT_EQ(needs[0].pointer, "/spec/egress/0/toNodes");
  EXPECT_EQ(needs[1].option, AgentOption::icmp_rules);
}

TEST(PolicyRequirements, UnmetAgainstUpstreamDefaultsAndAnEnabledAgent) {
  auto needs = needs_of(cnp(R"("ingress":[{"fromNodes":[{}]}],
      "egress":[{"toEndpoints":[{}],"toPorts":[{"ports":[{"port":"80","protocol":"TCP"}],
      "rules":{"http":[{}]}}]}])"));
  ASSERT_EQ(needs.size(), 2u);
  AgentOptions defaults;
  auto unmet = unmet_requirements(needs, defaults);
  ASSERT_EQ(unmet.size(), 1u);  // the L7 proxy is on by default
  EXPECT_EQ(unmet[0].option, AgentOption::node_selector_labels);
  const auto reason = requirement_reason(unmet[0], defaults);
  EXPECT_NE(reason.find("/spec/ingress/0/fromNodes"), std::string::npos) << reason;
  EXPECT_NE(reason.find("enable-node-selector-labels (off by default"), std::string::npos)
      << reason;
  AgentOptions on;
  on.set(AgentOption::node_selector_labels, true, AgentOptionOrigin::agent);
  EXPECT_TRUE(unmet_requirements(needs, on).empty());
  on.set(AgentOption::l7_proxy, false, AgentOptionOrigin::operator_flag);
  ASSERT_EQ(unmet_requirements(needs, on).size(), 1u);
  EXPECT_EQ(unmet_requirements(needs, on)[0].option, AgentOption::l7_proxy);
}

}  // namespace
}  // namespace cn::policy
