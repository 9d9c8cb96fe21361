#pragma once
// Which agent options a policy needs (docs/policies.md "Agent options"). The agent checks them in
// its rule validation (cilium/cilium pkg/policy/api/rule_validation.go) against its own
// option.Config; a node whose agent runs without one must not get the file.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/cilium/model/agent_options.h"

namespace cn::policy {

// What the agent does with a policy that needs an option it runs without.
enum class MissingOptionEffect {
  // Its rule validation refuses the rule: an error in its log when the file appears, and a
  // fatal exit when it next starts and re-reads the directory (pkg/policy/directory/watcher.go).
  fatal_at_restart,
  // It loads the policy but cannot enforce it as written (no host endpoint, no DNS proxy, no
  // authentication handler): the traffic is dropped or left unfiltered.
  not_enforced,
};

struct PolicyRequirement {
  cilium::AgentOption option;
  std::string pointer;  // JSON pointer of the first member of the document that needs it
  std::string feature;  // "fromNodes", "L7 rules", ... as docs/policies.md names them
  MissingOptionEffect effect = MissingOptionEffect::fatal_at_restart;
};

// One entry per option the document needs, in document order of first use. `doc` must have
// passed validate_policy_object(): what that refuses is not looked at again here.
std::vector<PolicyRequirement> policy_requirements(const nlohmann::json& doc);

// The requirements `options` does not meet, in the same order.
std::vector<PolicyRequirement> unmet_requirements(const std::vector<PolicyRequirement>& needed,
                                                  const cilium::AgentOptions& options);

// "<pointer>: needs the agent option enable-node-selector-labels (fromNodes; off by default,
// on this agent: off (agent))" — the reason `policy status`, `policy validate` and the log give.
std::string requirement_reason(const PolicyRequirement& req, const cilium::AgentOptions& options);

}  // namespace cn::policy
