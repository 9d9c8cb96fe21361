// The delegation rule (common/policy/policy_delegation.h): each kind of policy written from the
// operator's namespace, from a team's namespace for itself, and from a team's namespace for
// another.
#include <gtest/gtest.h>

#include <string>

#include "common/policy/policy_delegation.h"
#include "common/policy/policy_document.h"

namespace cn::policy {
namespace {

constexpr std::string_view kOperatorNs = "default";

// One document of each kind; "NS" is replaced by the namespace it names.
const char* const kCnp = R"({"apiVersion": "cilium.io/v2", "kind": "CiliumNetworkPolicy",
  "metadata": {"name": "x", "namespace": "NS"},
  "spec": {"endpointSelector": {}, "ingress": [{}]}})";
const char* const kCnpNoNamespace = R"({"apiVersion": "cilium.io/v2",
  "kind": "CiliumNetworkPolicy", "metadata": {"name": "x"},
  "spec": {"endpointSelector": {}, "ingress": [{}]}})";
const char* const kCcnp = R"({"apiVersion": "cilium.io/v2",
  "kind": "CiliumClusterwideNetworkPolicy", "metadata": {"name": "x"},
  "spec": {"endpointSelector": {}, "ingress": [{}]}})";
const char* const kHost = R"({"apiVersion": "cilium.io/v2",
  "kind": "CiliumClusterwideNetworkPolicy", "metadata": {"name": "x"},
  "specs": [{"endpointSelector": {}, "ingress": [{}]},
            {"nodeSelector": {}, "ingress": [{}]}]})";
const char* const kRuleArray = R"([{"endpointSelector": {}, "ingress": [{}]}])";

std::string naming(const char* doc, const std::string& ns) {
  std::string text = doc;
  if (auto at = text.find("\"NS\""); at != std::string::npos) text.replace(at, 4, "\"" + ns + "\"");
  return text;
}

// The object as the distributor builds it for a variable in `variable_ns`, then the rule.
Status judged(const std::string& item, const std::string& variable_ns) {
  auto object = policy_object_from_item(item, "nomad-x", {variable_ns, "cilium/policies/x", 3});
  if (!object) return std::unexpected(object.error());
  return check_delegation(*object, variable_ns, kOperatorNs);
}

void expect_refused(const Status& r, const std::string& pointer) {
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, ErrorKind::permission) << r.error().message;
  EXPECT_TRUE(r.error().message.starts_with(pointer + ": ")) << r.error().message;
}

TEST(PolicyDelegation, TheOperatorsNamespaceMayWriteEveryKindForEveryNamespace) {
  EXPECT_TRUE(judged(naming(kCnp, "default"), "default"));
  EXPECT_TRUE(judged(naming(kCnp, "team-a"), "default"));
  EXPECT_TRUE(judged(kCnpNoNamespace, "default"));
  EXPECT_TRUE(judged(kCcnp, "default"));
  EXPECT_TRUE(judged(kHost, "default"));
  EXPECT_TRUE(judged(kRuleArray, "default"));
}

TEST(PolicyDelegation, ATeamNamespaceMayWriteNamespacedPoliciesForItselfOnly) {
  EXPECT_TRUE(judged(naming(kCnp, "team-a"), "team-a"));
  EXPECT_TRUE(judged(kCnpNoNamespace, "team-a"));
  expect_refused(judged(naming(kCnp, "team-b"), "team-a"), "/metadata/namespace");
  // The operator's namespace is another namespace too.
  expect_refused(judged(naming(kCnp, "default"), "team-a"), "/metadata/namespace");
  auto other = judged(naming(kCnp, "team-b"), "team-a");
  ASSERT_FALSE(other);
  EXPECT_NE(other.error().message.find("\"team-a\""), std::string::npos);
  EXPECT_NE(other.error().message.find("not for \"team-b\""), std::string::npos);
}

TEST(PolicyDelegation, ATeamNamespaceMayWriteNoClusterwideOrHostPolicy) {
  expect_refused(judged(kCcnp, "team-a"), "/kind");
  expect_refused(judged(kRuleArray, "team-a"), "/kind");
  expect_refused(judged(kHost, "team-a"), "/specs/1/nodeSelector");
  auto host = judged(kHost, "team-a");
  ASSERT_FALSE(host);
  EXPECT_NE(host.error().message.find("host policy"), std::string::npos);
}

// kubectl apply -n X: the written object names X, since the agent reads an empty namespace in
// its directory as clusterwide.
TEST(PolicyDelegation, ACnpWithoutNamespaceIsTheVariablesNamespaceAndCarriesIt) {
  auto object = policy_object_from_item(kCnpNoNamespace, "nomad-x", {"team-a", "p", 1});
  ASSERT_TRUE(object) << object.error().message;
  EXPECT_EQ((*object)["metadata"]["namespace"], "team-a");
  // null and "" are no namespace either.
  for (const char* empty : {R"("namespace": null)", R"("namespace": "")"}) {
    std::string text = kCnp;
    text.replace(text.find(R"("namespace": "NS")"), 17, empty);
    auto o = policy_object_from_item(text, "nomad-x", {"team-b", "p", 1});
    ASSERT_TRUE(o) << o.error().message;
    EXPECT_EQ((*o)["metadata"]["namespace"], "team-b");
  }
  // A clusterwide policy stays without one.
  auto ccnp = policy_object_from_item(kCcnp, "nomad-x", {"default", "p", 1});
  ASSERT_TRUE(ccnp);
  EXPECT_FALSE((*ccnp)["metadata"].contains("namespace"));
}

}  // namespace
}  // namespace cn::policy
