// A namespaced policy selects endpoints by k8s:io.kubernetes.pod.namespace=<metadata.namespace>;
// our endpoints carry that label as derive_labels() writes it. A Nomad namespace that is not
// carried unchanged (too long for a label value, '-' at an end, or in the labeler's hashed form)
// would give a policy that selects nothing, so it is refused with what to write instead.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/labels/derive_labels.h"
#include "common/labels/label_policy.h"
#include "common/policy/policy_document.h"

namespace cn::policy {
namespace {

std::string cnp_in_namespace(const std::string& ns) {
  return R"({"apiVersion": "cilium.io/v2", "kind": "CiliumNetworkPolicy",
    "metadata": {"name": "web", "namespace": ")" +
         ns + R"("}, "spec": {"endpointSelector": {}, "egress": [{"toEntities": ["all"]}]}})";
}

// The value an endpoint in Nomad namespace `ns` carries under the namespace key.
std::string carried_namespace_label(const std::string& ns) {
  labels::AllocationIdentity id;
  id.nomad_namespace = ns;
  id.job_id = "web";
  id.task_group = "web";
  labels::LabelPolicy policy;
  policy.k8s_compat = true;
  auto set = labels::derive_labels(id, policy);
  const labels::Label* label = set.find(labels::kKeyK8sNamespace);
  return label ? label->value : "";
}

TEST(PolicyNamespace, ANamespaceEndpointsCarryUnchangedIsAccepted) {
  for (const std::string& ns :
       std::vector<std::string>{"default", "team-a", std::string(63, 'a'), "A1-b2"}) {
    ASSERT_EQ(carried_namespace_label(ns), ns);
    auto r = validate_policy_document(cnp_in_namespace(ns));
    EXPECT_TRUE(r) << ns << ": " << r.error().message;
  }
}

TEST(PolicyNamespace, ANamespaceEndpointsCarryHashedIsRefusedWithTheValueTheyCarry) {
  for (const std::string& ns :
       std::vector<std::string>{std::string(64, 'a'), std::string(128, 'b'), "-team", "team-",
                                "team-0123456789abcdef"}) {
    SCOPED_TRACE(ns);
    std::string carried = carried_namespace_label(ns);
    ASSERT_NE(carried, ns);
    auto r = validate_policy_document(cnp_in_namespace(ns));
    ASSERT_FALSE(r);
    const std::string& m = r.error().message;
    EXPECT_TRUE(m.starts_with("/metadata/namespace: namespace \"" + ns + "\" ")) << m;
    EXPECT_NE(m.find("would select no endpoint"), std::string::npos) << m;
    EXPECT_NE(m.find("k8s:io.kubernetes.pod.namespace: \"" + carried + "\""), std::string::npos)
        << m;
  }
  auto long_one = validate_policy_document(cnp_in_namespace(std::string(64, 'a')));
  ASSERT_FALSE(long_one);
  EXPECT_NE(long_one.error().message.find("is 64 characters, more than a label value's 63"),
            std::string::npos);
}

}  // namespace
}  // namespace cn::policy
