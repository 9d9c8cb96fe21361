#pragma once
// Which of the distributor's policy files select an endpoint as their subject, judged the way
// the agent reads them: a key's source is the part before its first ':' (none means any source;
// cilium/cilium pkg/labels), matchExpressions use the four Kubernetes operators, and a namespaced
// CiliumNetworkPolicy also requires k8s:io.kubernetes.pod.namespace=<its namespace>, which the
// agent's translation adds to its subject (cilium/cilium
// pkg/k8s/apis/cilium.io/utils/utils.go, getEndpointSelector). Host policies (nodeSelector) select
// nodes, never an allocation, and are left out.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/labels/label_set.h"

namespace cn::labeler::explain {

struct SelectingPolicy {
  std::string name;             // metadata.name
  std::string nomad_namespace;  // its variable's, from the file's annotations ("" if none)
  std::string kind;             // CiliumNetworkPolicy or CiliumClusterwideNetworkPolicy
  std::string file;
};

struct PolicyNotApplied {
  std::string source;           // the variable path, or the file when no variable is known
  std::string nomad_namespace;  // the variable's; "" for a file
  std::string state;  // the distributor's state ("invalid", "pending", ...) or "unreadable"
  std::string reason;
};

// Whether one LabelSelector object ({matchLabels, matchExpressions}) matches `labels`. A
// selector this code cannot read (an unknown operator) matches nothing: explain then shows the
// policy as not selecting, never the reverse.
bool selector_matches(const nlohmann::json& selector, const labels::LabelSet& labels);

// Whether any rule of a policy object (spec or specs) selects `labels` as its subject.
bool policy_selects(const nlohmann::json& policy, const labels::LabelSet& labels);

}  // namespace cn::labeler::explain
