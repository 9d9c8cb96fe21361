#include "common/cilium/model/agent_options.h"

#include <nlohmann/json.hpp>

#include "common/util/json_read.h"

namespace cn::cilium {
namespace {

// Defaults as cilium/cilium main defines them (the 1.19 line); each row names its file.
constexpr std::array<AgentOptionInfo, kAgentOptionCount> kAgentOptionRows = {{
    {AgentOption::node_selector_labels, "enable-node-selector-labels", "EnableNodeSelectorLabels",
     false, "pkg/defaults/defaults.go"},
    {AgentOption::l7_proxy, "enable-l7-proxy", "EnableL7Proxy", true, "pkg/defaults/defaults.go"},
    {AgentOption::icmp_rules, "enable-icmp-rules", "EnableICMPRules", true,
     "pkg/defaults/defaults.go"},
    {AgentOption::host_firewall, "enable-host-firewall", "EnableHostFirewall", false,
     "daemon/cmd/daemon_main.go"},
    // Older agents' pkg/auth/cell.go defaulted it to true; taken as off for 1.19, and
    // moot while the mutual handler below is off.
    {AgentOption::mesh_auth, "mesh-auth-enabled", "", false, "pkg/auth/cell.go"},
    {AgentOption::mesh_auth_mutual, "mesh-auth-mutual-enabled", "", false, "pkg/auth/spire/"},
    {AgentOption::policy_audit_mode, "policy-audit-mode", "PolicyAuditMode", false,
     "pkg/option/config.go"},
}};

}  // namespace

std::span<const AgentOptionInfo, kAgentOptionCount> agent_option_table() {
  return kAgentOptionRows;
}

const AgentOptionInfo& agent_option_info(AgentOption option) {
  return kAgentOptionRows[static_cast<std::size_t>(option)];
}

std::optional<AgentOption> agent_option_by_flag(std::string_view flag) {
  for (const auto& row : kAgentOptionRows) {
    if (row.flag == flag) return row.option;
  }
  return std::nullopt;
}

std::string_view to_string(AgentOptionOrigin origin) {
  switch (origin) {
    case AgentOptionOrigin::agent:
      return "agent";
    case AgentOptionOrigin::operator_flag:
      return "flag";
    case AgentOptionOrigin::upstream_default:
      break;
  }
  return "default";
}

AgentOptions::AgentOptions() {
  for (const auto& row : kAgentOptionRows) {
    set(row.option, row.upstream_default, AgentOptionOrigin::upstream_default);
  }
}

std::string AgentOptions::describe() const {
  std::string out;
  for (const auto& row : kAgentOptionRows) {
    const auto& value = get(row.option);
    if (!out.empty()) out += ' ';
    out += std::string(row.flag) + (value.enabled ? "=true(" : "=false(") +
           std::string(to_string(value.origin)) + ")";
  }
  return out;
}

const json::Fields& config_option_fields() {
  static const json::Fields fields = [] {
    json::Fields map;
    for (const auto& row : kAgentOptionRows) {
      if (!row.config_key.empty()) map.members.push_back({std::string(row.config_key), {}});
    }
    return json::Fields{{"status", {{"daemonConfigurationMap", map}}}};
  }();
  return fields;
}

Result<ReportedAgentOptions> parse_agent_options(std::string_view config_body) {
  auto doc = json::parse_json_text(config_body, "DaemonConfiguration", config_option_fields());
  if (!doc) return std::unexpected(doc.error());
  ReportedAgentOptions reported{};
  json::JsonReader r(*doc, "DaemonConfiguration");
  r.with_object("status", [&](json::JsonReader& status) {
    status.with_object("daemonConfigurationMap", [&](json::JsonReader& map) {
      for (const auto& row : kAgentOptionRows) {
        // Absent or null (what an old agent without the field would mean): not reported.
        if (row.config_key.empty() || !map.has(row.config_key)) continue;
        bool value = false;
        map.read(row.config_key, value);
        if (map.ok()) reported[static_cast<std::size_t>(row.option)] = value;
      }
    });
  });
  if (!r.ok()) return fail(r.error());
  return reported;
}

Result<std::pair<AgentOption, bool>> parse_agent_option_assignment(std::string_view text) {
  const auto eq = text.find('=');
  std::string names;
  for (const auto& row : kAgentOptionRows)
    names += (names.empty() ? "" : ", ") + std::string(row.flag);
  if (eq == std::string_view::npos) {
    return fail(ErrorKind::invalid,
                "\"" + std::string(text) + "\": expected NAME=true or NAME=false");
  }
  const auto option = agent_option_by_flag(text.substr(0, eq));
  if (!option) {
    return fail(ErrorKind::invalid, "\"" + std::string(text.substr(0, eq)) +
                                        "\" is not an agent option the labeler knows (" + names +
                                        ")");
  }
  const auto value = text.substr(eq + 1);
  if (value != "true" && value != "false") {
    return fail(ErrorKind::invalid,
                "\"" + std::string(text) + "\": the value must be true or false");
  }
  return std::pair{*option, value == "true"};
}

AgentOptions resolve_agent_options(const ReportedAgentOptions& reported,
                                   const ReportedAgentOptions& overrides) {
  AgentOptions out;
  for (const auto& row : kAgentOptionRows) {
    const auto i = static_cast<std::size_t>(row.option);
    if (overrides[i]) {
      out.set(row.option, *overrides[i], AgentOptionOrigin::operator_flag);
    } else if (reported[i]) {
      out.set(row.option, *reported[i], AgentOptionOrigin::agent);
    }
  }
  return out;
}

}  // namespace cn::cilium
