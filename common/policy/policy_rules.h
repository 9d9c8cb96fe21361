#pragma once
// One Cilium rule (a `spec`, an item of `specs`, or of a netreap rule array): the CRD schema's
// types, required fields, enums, patterns and bounds, then the cheap semantic checks of the
// agent's rule sanitizing. Throws walk::Violation at the first problem.
#include <string>

#include <nlohmann/json.hpp>

namespace cn::policy {

// `namespaced`: the rule belongs to a CiliumNetworkPolicy, which may not use nodeSelector.
void check_rule(const nlohmann::json& rule, const std::string& pointer, bool namespaced);

}  // namespace cn::policy
