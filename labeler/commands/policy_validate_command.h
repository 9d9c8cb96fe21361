#pragma once
// `cilium-nomad-labeler policy validate FILE...`: the distributor's own check, offline, on files.
#include <iosfwd>
#include <string>
#include <vector>

#include "common/cilium/model/agent_options.h"

namespace cn::labeler {

// One line per file, "<file>: OK" on `out` or "<file>: <pointer>: <reason>" on `err`. A file
// holding a bare rule array (netreap's `cilium policy import` format) is checked as the
// distributor wraps it, a CiliumClusterwideNetworkPolicy's `specs`.
// A valid file that needs an agent option `options` lacks (upstream defaults unless
// --agent-option) is refused with the option named: the distributor would not write it.
// Each file is taken for a variable in Nomad namespace `scope.variable_namespace`: a
// CiliumNetworkPolicy without a namespace gets it, and the delegation rule
// (common/policy/policy_delegation.h) applies against `scope.operator_namespace`, its refusal
// reading "<pointer>: not delegated: <rule>".
// Returns 0 when every file is valid, 1 otherwise (unreadable files count as invalid).
struct ValidateScope {
  std::string variable_namespace = "default";  // --nomad-namespace
  std::string operator_namespace = "default";  // --policy-namespace
};
int validate_policy_files(const std::vector<std::string>& files,
                          const cilium::AgentOptions& options, const ValidateScope& scope,
                          std::ostream& out, std::ostream& err);

}  // namespace cn::labeler
