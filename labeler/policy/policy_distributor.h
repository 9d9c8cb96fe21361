#pragma once
// Cilium policies from Nomad Variables into the agent's static policy directory (README "Policies",
// docs/policies.md). One variable under --policy-prefix, in any Nomad namespace, is one policy,
// written to nomad-<namespace>.<name>.yaml. A namespace other than the operator's
// (--policy-namespace) may write only CiliumNetworkPolicies for itself
// (common/policy/policy_delegation.h); anything else is `not_delegated`.
//
// Safe by construction:
//  - nothing is written that validate_policy_document() or the delegation rule refuses; a
//    refused version leaves the last good file in place;
//  - a file of the previous release (nomad-<name>.yaml, the operator's namespace) is removed
//    only once the new file holds a good version of the same variable, and only when its
//    annotations name that variable;
//  - files are replaced atomically, so the agent (which exits on a file it cannot translate)
//    never reads half of one;
//  - a file is removed only after a direct GET of its variable answers Nomad's 404 "variable
//    not found". A list that lacks it proves nothing: an ACL filters lists silently, and a
//    failed or partial list must never read as "everything was deleted".
//
// A policy that needs an agent option the local agent runs without (common/policy/
// policy_requirements.h) is not written on this node: the agent would refuse it and exit at its
// next start. Its options come from GET /v1/config at every full pass, --agent-option overrides
// them, and the upstream defaults stand in for what the agent does not tell.
//
// The watch is a blocking query on the variable list; a variable is read only when its
// ModifyIndex moved. Every resync re-lists without blocking and re-reads any variable whose file
// is missing or holds another version.
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stop_token>
#include <string>
#include <vector>

#include <spdlog/fwd.h>

#include "common/cilium/client/cilium_api.h"
#include "common/cilium/model/agent_options.h"
#include "common/nomad/client/nomad_api.h"
#include "common/policy/policy_requirements.h"
#include "common/util/backoff.h"
#include "common/util/clock.h"
#include "common/util/mutex.h"
#include "labeler/policy/policy_directory.h"
#include "labeler/policy/policy_mode.h"
#include "labeler/policy/policy_settings.h"
#include "labeler/policy/policy_status.h"
#include "labeler/serve/call_recorder.h"
#include "labeler/serve/metrics.h"

namespace cn::labeler::policy {

class PolicyDistributor {
 public:
  // `cilium` null: the agent is never asked, its options are the defaults and the overrides.
  PolicyDistributor(PolicySettings settings, nomad::NomadApi& nomad, Clock& clock, Metrics& metrics,
                    CallRecorder& calls, std::shared_ptr<spdlog::logger> log,
                    cilium::CiliumApi* cilium = nullptr);

  // The watch loop, full reconciles included, until stop.
  void run(std::stop_token stop);

  // One full pass: a non-blocking list, then apply(). Returns the list's index.
  [[nodiscard]] Result<std::uint64_t> reconcile(std::stop_token stop = {});

  PolicyStatus status() const;

  // Called at the end of every pass that looked at the listing (the audit-mode hook,
  // policy_auditor.h). Set before run().
  void set_on_pass(std::function<void()> on_pass) { on_pass_ = std::move(on_pass); }

 private:
  void watch(std::stop_token stop);
  // Brings the directory in line with one listing (see the header comment for the rules).
  void apply(const std::vector<nomad::VariableMeta>& listed, std::stop_token stop);
  // `name` is the file stem; `legacy` the previous release's file of this variable, if any.
  void apply_variable(const nomad::VariableMeta& meta, const std::string& name,
                      const OwnedFile* legacy, const std::map<std::string, OwnedFile>& files,
                      std::size_t& owned_count, PolicyRecord& rec, std::stop_token stop);
  const OwnedFile* legacy_file(const nomad::VariableMeta& meta, const std::string& name,
                               const std::string& stem,
                               const std::map<std::string, OwnedFile>& files) const;
  void retire_legacy(const OwnedFile* legacy, const nomad::VariableMeta& meta);
  void remove_unlisted(const std::map<std::string, OwnedFile>& files,
                       const std::set<std::string>& listed_names, std::stop_token stop);
  void set_state(PolicyRecord& rec, PolicyState state, std::string reason);
  // Asks the agent (on full passes); a change of options re-checks every policy.
  void refresh_agent_options(std::stop_token stop);
  // What an existing file of ours needs that the agent lacks (empty when unreadable).
  std::vector<cn::policy::PolicyRequirement> file_unmet(const OwnedFile& file) const;
  static PolicyMode file_mode(const OwnedFile& file);
  // Records `unmet` (not empty) for this version; removes the file when it too needs an option
  // the agent lacks, so that the agent's next start does not read it.
  void mark_unsupported(const nomad::VariableMeta& meta, std::uint64_t index,
                        const std::vector<cn::policy::PolicyRequirement>& unmet,
                        const OwnedFile* file, PolicyRecord& rec);
  void publish();  // metrics and the status file
  bool has_pending() const;
  Deadline call_deadline(std::stop_token stop) const;

  PolicySettings settings_;
  nomad::NomadApi& nomad_;
  Clock& clock_;
  Metrics& metrics_;
  CallRecorder& calls_;
  std::shared_ptr<spdlog::logger> log_;
  PolicyDirectory dir_;
  std::string list_prefix_;  // policy_list_prefix(settings_.prefix)
  BackoffJitter jitter_;     // the backoffs of run() and of the watch
  cilium::CiliumApi* cilium_;
  // Only the pass thread touches these.
  cilium::AgentOptions options_;
  std::optional<cilium::ReportedAgentOptions> last_reported_;
  std::string assumed_logged_;  // what the last "assuming" log line said
  bool recheck_ = false;
  std::function<void()> on_pass_;

  // Written by the one thread that runs passes; read by status() from others.
  mutable Mutex mu_;
  PolicyStatus status_ GUARDED_BY(mu_);
  // What the status file last said, its time left out.
  std::optional<PolicyStatus> last_published_ GUARDED_BY(mu_);
};

}  // namespace cn::labeler::policy
