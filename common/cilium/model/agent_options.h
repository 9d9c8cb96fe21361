#pragma once
// The agent options a Cilium policy can depend on (docs/policies.md "Agent options"), what the
// agent's GET /v1/config tells of them, and the upstream defaults assumed where it does not.
//
// GET /v1/config answers DaemonConfiguration; its status.daemonConfigurationMap is the agent's
// option.Config struct by Go field name (cilium/cilium daemon/cmd/config.go, getConfigHandler),
// so only options that live in that struct can be read there. Options of hive cells
// (mesh-auth-*) never appear in it: for them the operator's --agent-option or the default holds.
#include <array>
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "common/util/json_fields.h"
#include "common/util/result.h"

namespace cn::cilium {

enum class AgentOption {
  node_selector_labels,  // enable-node-selector-labels
  l7_proxy,              // enable-l7-proxy
  icmp_rules,            // enable-icmp-rules
  host_firewall,         // enable-host-firewall
  mesh_auth,             // mesh-auth-enabled
  mesh_auth_mutual,      // mesh-auth-mutual-enabled
  // Not a policy requirement: on, every endpoint is in audit and the labeler leaves the
  // per-endpoint option alone (docs/policies.md "Audit before enforce").
  policy_audit_mode,  // policy-audit-mode
};
inline constexpr std::size_t kAgentOptionCount = 7;

struct AgentOptionInfo {
  AgentOption option;
  std::string_view flag;        // the agent's flag name, as --agent-option takes it
  std::string_view config_key;  // member of daemonConfigurationMap; empty: not reported there
  bool upstream_default;        // the current release's default
  std::string_view source;      // the upstream file that defines the default
};

std::span<const AgentOptionInfo, kAgentOptionCount> agent_option_table();
const AgentOptionInfo& agent_option_info(AgentOption option);
std::optional<AgentOption> agent_option_by_flag(std::string_view flag);

// Where a value came from: the labeler says so in `policy status` and its log.
enum class AgentOptionOrigin { upstream_default, agent, operator_flag };
std::string_view to_string(AgentOptionOrigin origin);

struct AgentOptionValue {
  bool enabled = false;
  AgentOptionOrigin origin = AgentOptionOrigin::upstream_default;
  bool operator==(const AgentOptionValue&) const = default;
};

class AgentOptions {
 public:
  // Every option at its upstream default.
  AgentOptions();

  const AgentOptionValue& get(AgentOption option) const {
    return values_[static_cast<std::size_t>(option)];
  }
  bool enabled(AgentOption option) const { return get(option).enabled; }
  void set(AgentOption option, bool enabled, AgentOptionOrigin origin) {
    values_[static_cast<std::size_t>(option)] = {enabled, origin};
  }
  // "enable-l7-proxy=true(agent) ..." for one log line.
  std::string describe() const;
  bool operator==(const AgentOptions&) const = default;

 private:
  std::array<AgentOptionValue, kAgentOptionCount> values_{};
};

// What one GET /v1/config told: an entry per option the answer reports, nullopt otherwise.
using ReportedAgentOptions = std::array<std::optional<bool>, kAgentOptionCount>;

// The members parse_agent_options() reads: keep it in step with agent_options.cpp.
const json::Fields& config_option_fields();

// Body of GET /v1/config. Fails (invalid) when the body is not a DaemonConfiguration object or
// a member we read has the wrong type; an absent member is simply not reported.
[[nodiscard]] Result<ReportedAgentOptions> parse_agent_options(std::string_view config_body);

// "NAME=true|false" as --agent-option takes it; the error names what is wrong.
[[nodiscard]] Result<std::pair<AgentOption, bool>> parse_agent_option_assignment(
    std::string_view text);

// Defaults, then what the agent reported, then the operator's overrides (which always win).
AgentOptions resolve_agent_options(const ReportedAgentOptions& reported,
                                   const ReportedAgentOptions& overrides);

}  // namespace cn::cilium
