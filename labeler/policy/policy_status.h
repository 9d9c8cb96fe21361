#pragma once
// What the policy distributor knows of each policy, kept in a status file beside the node state
// file so that `cilium-nomad-labeler policy status` can show it without asking the daemon.
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "common/util/result.h"

namespace cn::labeler::policy {

enum class PolicyState {
  applied,  // the file in the directory holds the variable's current version
  invalid,  // the current version was refused; the last good file (if any) stays
  pending,  // the current version could not be read or written yet; retried
  // valid, but needs an agent option this node's agent runs without (`option`): not written
  // here, the last good file stays if it needs nothing the agent lacks. Valid on other nodes,
  // so it is not `invalid`.
  unsupported,
  // valid, but its variable's namespace may not write it (common/policy/policy_delegation.h):
  // a clusterwide or host policy outside the operator's namespace, or a CiliumNetworkPolicy for
  // another namespace. The last good file stays, as for `invalid`.
  not_delegated,
};
std::string_view to_string(PolicyState state);

struct PolicyRecord {
  std::string nomad_namespace;  // the variable's; files of labelers before it: the status's
  std::string variable_path;
  std::string name;              // the policy's file stem "<namespace>.<name>": nomad-<stem>.yaml
  std::string file;              // empty while no version was ever written
  std::uint64_t seen_index = 0;  // the variable's ModifyIndex last listed
  std::uint64_t applied_index = 0;  // the ModifyIndex whose content the file holds; 0: none
  PolicyState state = PolicyState::pending;
  std::string reason;  // why invalid, not_delegated, pending or unsupported; empty when applied
  std::string option;  // unsupported: the agent option it needs (its flag name)
  std::string mode;    // "audit" or "enforce" of the written file; empty: not known
  long long changed_unix_ms = 0;  // last change of state or of the file

  friend bool operator==(const PolicyRecord&, const PolicyRecord&) = default;
};

// The key of a record in PolicyStatus::policies: "<namespace>/<variable path>" (a namespace has
// no '/'), since two namespaces may hold the same path.
std::string policy_record_key(std::string_view nomad_namespace, std::string_view variable_path);

struct PolicyStatus {
  std::string nomad_namespace;  // the operator's (--policy-namespace); policies come from all
  std::string prefix;
  std::string directory;
  long long updated_unix_ms = 0;
  // The options the distributor checked against, "enable-l7-proxy=true(agent) ..."; empty in
  // files of labelers before it.
  std::string agent_options;
  std::map<std::string, PolicyRecord> policies;  // by policy_record_key()

  friend bool operator==(const PolicyStatus&, const PolicyStatus&) = default;
};

// The file is the labeler's own output, but it is read back by a separate command: parsing is
// strict and fails with the reason rather than showing half a status.
std::string to_text(const PolicyStatus& status);
[[nodiscard]] Result<PolicyStatus> parse_policy_status(std::string_view text);

// Reads and parses the file. Error kind from errno when it cannot be read (not_found when there
// is none), `invalid` when it cannot be parsed.
[[nodiscard]] Result<PolicyStatus> read_policy_status(const std::string& path);

// "<dir of state_file>/policy-status.json".
std::string policy_status_path(std::string_view state_file);

}  // namespace cn::labeler::policy
