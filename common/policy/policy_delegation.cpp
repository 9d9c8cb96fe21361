#include "common/policy/policy_delegation.h"

#include <string>

#include "common/policy/policy_object.h"

namespace cn::policy {
namespace {

using nlohmann::json;

std::string delegation_kind_of(const json& object) {
  const auto kind = object.find("kind");
  return kind != object.end() && kind->is_string() ? kind->get<std::string>() : std::string();
}

// The pointer of the first rule with a nodeSelector, or "" when none has one.
std::string first_node_selector(const json& object) {
  if (auto spec = object.find("spec");
      spec != object.end() && spec->is_object() && spec->contains("nodeSelector")) {
    return "/spec/nodeSelector";
  }
  if (auto specs = object.find("specs"); specs != object.end() && specs->is_array()) {
    for (std::size_t i = 0; i < specs->size(); ++i) {
      if ((*specs)[i].is_object() && (*specs)[i].contains("nodeSelector"))
        return "/specs/" + std::to_string(i) + "/nodeSelector";
    }
  }
  return {};
}

Status delegation_refusal(const std::string& pointer, const std::string& rule) {
  return fail(ErrorKind::permission, pointer + ": " + rule);
}

}  // namespace

void default_policy_namespace(json& object, std::string_view variable_namespace) {
  if (variable_namespace.empty() || !object.is_object()) return;
  if (delegation_kind_of(object) != kKindNamespaced) return;
  auto meta = object.find("metadata");
  if (meta == object.end() || !meta->is_object()) return;
  auto ns = meta->find("namespace");
  if (ns == meta->end() || ns->is_null() || (ns->is_string() && ns->get<std::string>().empty()))
    (*meta)["namespace"] = std::string(variable_namespace);
}

Status check_delegation(const json& object, std::string_view variable_namespace,
                        std::string_view operator_namespace) {
  if (variable_namespace == operator_namespace) return {};
  const std::string from = "a variable in Nomad namespace \"" + std::string(variable_namespace) +
                           "\" (not the operator's namespace \"" + std::string(operator_namespace) +
                           "\")";
  const std::string kind = delegation_kind_of(object);
  if (kind != kKindNamespaced) {
    if (const std::string host = first_node_selector(object); !host.empty()) {
      return delegation_refusal(
          host, from +
                    " may not write a host policy (nodeSelector): host and clusterwide "
                    "policies come only from the operator's namespace");
    }
    return delegation_refusal("/kind",
                              from + " may not write a " + std::string(kKindClusterwide) +
                                  " (a rule array is one): clusterwide policies come only from the "
                                  "operator's namespace");
  }
  const json* ns = nullptr;
  if (auto meta = object.find("metadata"); meta != object.end() && meta->is_object()) {
    if (auto it = meta->find("namespace"); it != meta->end()) ns = &*it;
  }
  const std::string target = ns && ns->is_string() ? ns->get<std::string>() : std::string();
  if (target != variable_namespace) {
    return delegation_refusal("/metadata/namespace",
                              from + " may write CiliumNetworkPolicies for namespace \"" +
                                  std::string(variable_namespace) + "\" only, not for \"" + target +
                                  "\"");
  }
  return {};
}

}  // namespace cn::policy
