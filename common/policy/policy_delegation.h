#pragma once
// Who may write which policy (docs/policies.md, "Delegation"). The distributor reads the policy
// prefix in every Nomad namespace, so whoever may write variables in a namespace may write
// policies there; this rule keeps each namespace's policies to its own endpoints:
//  - a variable in the operator's namespace (--policy-namespace) may produce any policy;
//  - a variable in any other namespace X may produce only CiliumNetworkPolicies of namespace X:
//    no CiliumClusterwideNetworkPolicy (a netreap rule array is one), hence no host policy
//    (nodeSelector, which only a clusterwide policy may carry), and no CNP naming another
//    namespace.
#include <string_view>

#include <nlohmann/json.hpp>

#include "common/util/result.h"

namespace cn::policy {

// What `kubectl apply -n X` does with a namespaced object that names no namespace: a
// CiliumNetworkPolicy without metadata.namespace (absent, null or "") gets `variable_namespace`.
// The file must carry it: the agent reads a file's empty namespace as clusterwide
// (docs/policies.md). Anything else, or an empty `variable_namespace`, is left as it is.
void default_policy_namespace(nlohmann::json& object, std::string_view variable_namespace);

// The rule above on a validated object. Error kind `permission`, message
// "<JSON pointer>: <the rule broken>" like the validator's (the pointer is /kind, the first
// /spec/nodeSelector or /specs/N/nodeSelector, or /metadata/namespace).
[[nodiscard]] Status check_delegation(const nlohmann::json& object,
                                      std::string_view variable_namespace,
                                      std::string_view operator_namespace);

}  // namespace cn::policy
