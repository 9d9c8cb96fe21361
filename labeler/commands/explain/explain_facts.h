#pragma once
// Everything the node can tell about one allocation, gathered with read-only calls: the state
// file, the Cilium endpoint, Nomad's allocation, the labels the labeler would derive and the
// distributor's policies. Each source may be missing or unreachable; the facts say which, and
// explain_verdict() judges them. Nothing here writes.
#include <optional>
#include <string>
#include <vector>

#include "common/cilium/client/cilium_api.h"
#include "common/cilium/model/label_write_plan.h"
#include "common/labels/derive_labels.h"
#include "common/nomad/client/nomad_api.h"
#include "common/state/state_entry.h"
#include "common/util/clock.h"
#include "labeler/commands/explain/policy_subjects.h"

namespace cn::labeler::explain {

struct ExplainSettings {
  std::string state_file;
  std::string socket_path;  // the daemon's notification socket; empty: not looked at
  std::string policy_dir;   // empty: policies are not looked at
  labels::LabelPolicy label_policy;
  std::string fallback_cluster_name = "default";  // when the agent's /v1/healthz does not tell
  std::chrono::milliseconds call_timeout{5000};
};

struct NomadView {
  nomad::Allocation alloc;  // its Job is dropped once the identity is read
  std::optional<labels::AllocationIdentity> identity;
  std::string identity_error;  // why no identity could be read from the allocation
};

// What is wrong with the node before any allocation is looked at: a missing state file or
// notification socket explains every other line, so it is said first.
std::vector<std::string> node_problems(const ExplainSettings& settings);

struct ServiceOfAlloc {
  std::string service;  // "<namespace>/<name>"
  std::string vip;      // empty: none
  std::string state;    // ready, not-ready or left-out
  std::string reason;
};

struct ExplainFacts {
  std::string alloc_id;  // the full ID the query resolved to
  std::vector<std::string> node_problems;

  std::string state_error;  // the state file could not be read (missing, corrupt)
  std::optional<state::StateEntry> entry;
  std::optional<long long> deleted_unix_ms;  // a tombstone: the plugin's DEL removed the entry
  std::optional<state::LastAttempt> last_attempt;  // the labeler's last failure, if any

  std::optional<cilium::Endpoint> endpoint;
  std::string endpoint_found_by;  // the endpoint ID form that found it
  std::string cilium_error;       // the agent could not be asked

  std::optional<NomadView> nomad;
  bool nomad_not_found = false;  // Nomad answered 404: it does not know the allocation
  std::string nomad_error;       // Nomad could not be asked (transport, ACL, 5xx)

  std::string cluster_name;
  bool meta_labels_given = false;              // explain was given --meta-labels
  std::optional<labels::LabelSet> desired;     // what the labeler derives from Nomad's answer
  std::optional<cilium::LabelWritePlan> plan;  // desired vs the endpoint's identity

  bool policies_checked = false;          // a policy directory was given and read
  std::vector<SelectingPolicy> policies;  // the distributor's policies selecting the endpoint
  std::string policy_error;
  // Policies the node does not enforce, so whether they would select the endpoint is unknown:
  // variables the distributor refused or could not write yet (its status file), and files of
  // ours that cannot be read. Said, so that a missing policy is never silently left out.
  std::vector<PolicyNotApplied> policies_not_applied;

  // Audit before enforce (docs/policies.md): the endpoint's PolicyAuditMode as the agent reports
  // it (nullopt: not reported), and the audit-mode policies the labeler put it in audit for
  // (empty: not by the labeler's hand). `global_audit`: the agent's --policy-audit-mode.
  std::optional<bool> endpoint_audit;
  std::vector<std::string> audit_policies;
  bool global_audit = false;

  // The allocation as a backend of Nomad services on the load balancer, from the daemon's
  // services-status.json (docs/services.md); `services_status` empty: the feature is off here.
  std::string services_status;  // "state file /path" or "REST API", or why it is unreadable
  std::vector<ServiceOfAlloc> services;
};

// Resolves a full ID or an unambiguous prefix against the state file and the agent's endpoints.
// A full ID is taken as it is even when the node knows nothing of it (Nomad may).
[[nodiscard]] Result<std::string> resolve_alloc_id(std::string_view query,
                                                   const ExplainSettings& settings,
                                                   cilium::CiliumApi& cilium, Clock& clock);

ExplainFacts gather_facts(const std::string& alloc_id, const ExplainSettings& settings,
                          nomad::NomadApi& nomad, cilium::CiliumApi& cilium, Clock& clock);

}  // namespace cn::labeler::explain
