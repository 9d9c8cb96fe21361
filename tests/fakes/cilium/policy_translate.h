#pragma once
// What cilium-agent does with one file of its --static-cnp-path directory, in the fake's own
// words (cilium/cilium pkg/policy/directory/watcher.go, pkg/k8s/apis/cilium.io/v2 Parse,
// pkg/k8s/apis/cilium.io/utils/utils.go):
//   1. translate: YAML -> JSON (first document only) -> decode into the CiliumNetworkPolicy Go
//      types. A failure here is an untranslatable file: the agent exits, whenever it happens.
//   2. parse: name required, not empty, rule sanity, selector operators; then the namespace
//      and cluster selectors are injected. A failure here is fatal at startup and only logged
//      at runtime.
// Deliberately small: it checks what the agent needs to translate, not the CRD schema.
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/util/result.h"
#include "tests/fakes/cilium/policy_selector.h"

namespace cn::fakes::cilium {

// sigs.k8s.io/yaml YAMLToJSON: YAML 1.1 scalars (yes/no/on/off are booleans, unquoted numbers
// are numbers), only the first document; an empty document is JSON null.
Result<nlohmann::json> yaml_to_json(std::string_view text);

// json.Unmarshal into CiliumNetworkPolicy: null is fine anywhere, unknown fields are ignored,
// a known field of the wrong JSON type is an error naming its path.
Status check_decodes(const nlohmann::json& doc);

// The agent options its rule validation reads from option.Config (cilium/cilium
// pkg/policy/api/rule_validation.go); defaults as pkg/defaults/defaults.go has them.
struct RuleValidationFlags {
  bool enable_node_selector_labels = false;  // fromNodes/toNodes
  bool enable_l7_proxy = true;               // toPorts[].rules
  bool enable_icmp_rules = true;             // icmps
  // Reported by GET /v1/config only: host policies load either way (no host endpoint enforces).
  bool enable_host_firewall = false;
};

struct InjectionOptions {
  // Cluster name injected into peer selectors (policy-default-local-cluster, default from 1.19);
  // empty: none.
  std::string cluster_name;
  RuleValidationFlags flags;
};

struct TranslatedRule {
  EndpointSelector subject;
  bool node_subject = false;            // nodeSelector: selects nodes, never endpoints
  std::vector<EndpointSelector> peers;  // ingress fromEndpoints, egress toEndpoints (+ deny)
  nlohmann::json rule;                  // the rule with every selector as injected
};

struct TranslatedPolicy {
  std::string name;
  std::string namespace_;  // empty: clusterwide
  std::vector<TranslatedRule> rules;
  bool clusterwide() const { return namespace_.empty(); }
};

Result<TranslatedPolicy> parse_policy(const nlohmann::json& doc, const InjectionOptions& options);

// k8s.io/apimachinery IsDNS1123Subdomain.
bool is_dns1123_subdomain(std::string_view name);

}  // namespace cn::fakes::cilium
