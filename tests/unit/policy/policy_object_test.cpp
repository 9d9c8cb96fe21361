// policy_object_from_item (what the distributor writes) and policy_name_from_path (its name).
#include <gtest/gtest.h>

#include <string>

#include "common/policy/policy_document.h"

namespace cn::policy {
namespace {

using nlohmann::json;

const PolicySource kSource{"default", "cilium/policies/team/web", 42};

TEST(PolicyObject, NetreapRuleArrayBecomesAClusterwidePolicy) {
  auto r = policy_object_from_item(
      R"([{"endpointSelector": {"matchLabels": {"nomad:nomad.job": "web"}},
           "ingress": [{"fromEndpoints": [{"matchLabels": {"nomad:nomad.job": "frontend"}}],
                        "toPorts": [{"ports": [{"port": "8080", "protocol": "TCP"}]}]}]}])",
      "nomad-team.web", kSource);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ((*r)["apiVersion"], "cilium.io/v2");
  EXPECT_EQ((*r)["kind"], "CiliumClusterwideNetworkPolicy");
  EXPECT_EQ((*r)["metadata"]["name"], "nomad-team.web");
  EXPECT_FALSE((*r)["metadata"].contains("namespace"));
  EXPECT_EQ((*r)["specs"].size(), 1u);
  EXPECT_EQ((*r)["specs"][0]["ingress"][0]["toPorts"][0]["ports"][0]["port"], "8080");
  const json& a = (*r)["metadata"]["annotations"];
  EXPECT_EQ(a[std::string(kAnnotationNamespace)], "default");
  EXPECT_EQ(a[std::string(kAnnotationPath)], "cilium/policies/team/web");
  EXPECT_EQ(a[std::string(kAnnotationModifyIndex)], "42");
}

TEST(PolicyObject, ErrorsInARuleArrayPointIntoTheArray) {
  auto r = policy_object_from_item(
      R"([{"endpointSelector": {}, "ingress": [{}]},
          {"endpointSelector": {}, "ingress": [{"toPorts": [{"ports": [{"port": "70000"}]}]}]}])",
      "nomad-x", kSource);
  ASSERT_FALSE(r);
  EXPECT_EQ(
      r.error().message,
      "/1/ingress/0/toPorts/0/ports/0/port: \"70000\" is not a port (0-65535) or a port name");
}

TEST(PolicyObject, ServerFieldsAndStatusAreDroppedNameAndAnnotationsSet) {
  auto r = policy_object_from_item(R"(
apiVersion: cilium.io/v2
kind: CiliumNetworkPolicy
metadata:
  name: original
  namespace: prod
  uid: 0d5c4b8e-2f0e-4c1e-9f0a-1b2c3d4e5f60
  resourceVersion: "981"
  generation: 3
  creationTimestamp: "2026-01-02T03:04:05Z"
  managedFields: [{manager: kubectl}]
  labels: {team: web}
  annotations: {owner: alice}
spec:
  endpointSelector: {matchLabels: {"nomad:nomad.job": web}}
  egress: [{toEntities: [world]}]
status:
  conditions: [{type: Valid, status: "True"}]
)",
                                   "nomad-web", kSource);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_FALSE(r->contains("status"));
  const json& meta = (*r)["metadata"];
  EXPECT_EQ(meta["name"], "nomad-web");
  EXPECT_EQ(meta["namespace"], "prod");
  EXPECT_EQ(meta["labels"], json({{"team", "web"}}));
  EXPECT_EQ(meta["annotations"]["owner"], "alice");
  EXPECT_EQ(meta["annotations"][std::string(kAnnotationModifyIndex)], "42");
  for (auto key : {"uid", "resourceVersion", "generation", "creationTimestamp", "managedFields"}) {
    EXPECT_FALSE(meta.contains(key)) << key;
  }
  // What the distributor writes passes the same validator again.
  EXPECT_TRUE(validate_policy_document(r->dump()));
}

TEST(PolicyObject, InvalidItemsAreRefused) {
  EXPECT_FALSE(policy_object_from_item("42", "nomad-x", kSource));
  EXPECT_FALSE(policy_object_from_item("[]", "nomad-x", kSource));
  EXPECT_FALSE(policy_object_from_item(R"({"kind": "CiliumNetworkPolicy"})", "nomad-x", kSource));
  auto r = policy_object_from_item(R"(apiVersion: cilium.io/v2
kind: CiliumNetworkPolicy
metadata: {name: a, namespace: "not_a_namespace"}
spec: {endpointSelector: {}, ingress: [{}]}
)",
                                   "nomad-x", kSource);
  ASSERT_FALSE(r);
  EXPECT_TRUE(r.error().message.starts_with("/metadata/namespace: ")) << r.error().message;
}

TEST(PolicyName, PathAfterThePrefixWithDots) {
  EXPECT_EQ(policy_name_from_path("cilium/policies", "cilium/policies/web").value(), "web");
  EXPECT_EQ(policy_name_from_path("cilium/policies/", "cilium/policies/team/web").value(),
            "team.web");
  EXPECT_EQ(policy_name_from_path("cilium/policies", "cilium/policies/a-1/b2/c").value(),
            "a-1.b2.c");
}

TEST(PolicyName, EmptyPrefixTakesTheWholePath) {
  EXPECT_EQ(policy_name_from_path("", "team/web").value(), "team.web");
  EXPECT_EQ(policy_name_from_path("/", "web").value(), "web");
  EXPECT_FALSE(policy_name_from_path("", ""));
  EXPECT_FALSE(policy_name_from_path("", "/web"));
}

TEST(PolicyName, RefusesWhatTheAgentWouldNotLoad) {
  for (const char* path : {"cilium/policies", "cilium/policies/", "cilium/policiesx/web",
                           "other/web", "cilium/policies/Web", "cilium/policies/my_policy",
                           "cilium/policies/a~b", "cilium/policies/-web", "cilium/policies/web-",
                           "cilium/policies/a//b", "cilium/policies/a/", "cilium/policies/a/-b"}) {
    auto r = policy_name_from_path("cilium/policies", path);
    EXPECT_FALSE(r) << path << " -> " << r.value_or("");
    if (!r) {
      EXPECT_EQ(r.error().kind, ErrorKind::invalid);
    }
  }
}

TEST(PolicyName, LongestNameStillGivesAValidFileName) {
  std::string longest(253 - kFilePrefix.size() - kFileSuffix.size(), 'a');
  auto ok = policy_name_from_path("p", "p/" + longest);
  ASSERT_TRUE(ok);
  EXPECT_EQ((std::string(kFilePrefix) + *ok + std::string(kFileSuffix)).size(), 253u);
  EXPECT_FALSE(policy_name_from_path("p", "p/" + longest + "a"));
}

}  // namespace
}  // namespace cn::policy
