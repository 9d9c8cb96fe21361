#pragma once
// Which endpoints a policy object selects as its subject, judged the way the agent reads it: a
// key's source is the part before its first ':' (none means any source; cilium/cilium
// pkg/labels), matchExpressions use the four Kubernetes operators, and a namespaced
// CiliumNetworkPolicy also requires k8s:io.kubernetes.pod.namespace=<its namespace>, which the
// agent's translation adds to its subject (cilium/cilium
// pkg/k8s/apis/cilium.io/utils/utils.go, getEndpointSelector). Host policies (nodeSelector) select
// nodes, never an allocation, and are left out. Shared by `explain` and the audit mode
// (policy_audit.h), so both name the same subjects.
#include <nlohmann/json.hpp>

#include "common/labels/label_set.h"

namespace cn::labeler::policy {

// Whether one LabelSelector object ({matchLabels, matchExpressions}) matches `labels`. A
// selector this code cannot read (an unknown operator) matches nothing: explain then shows the
// policy as not selecting, never the reverse, and audit mode leaves the endpoint alone.
bool selector_matches(const nlohmann::json& selector, const labels::LabelSet& labels);

// Whether any rule of a policy object (spec or specs) selects `labels` as its subject.
bool policy_selects(const nlohmann::json& policy, const labels::LabelSet& labels);

}  // namespace cn::labeler::policy
