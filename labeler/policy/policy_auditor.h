#pragma once
// Applies audit-mode policies to this node's endpoints (docs/policies.md "Audit before
// enforce"; the decisions are policy_audit.h's). Its inputs are the policy directory (a file's
// mode annotation, policy_mode.h), GET /v1/endpoint and GET /v1/config; its output is PATCH
// /v1/endpoint/{id}/config {"options":{"PolicyAuditMode":...}} and the claims file.
//
// A pass runs when kicked (the distributor after each pass, the labeling path after each
// labeled allocation, a reconcile) and, after a failure, on the project's backoff. Nothing is
// asked of the agent while no policy is in audit and nothing is claimed, so nodes that never
// use audit mode pay nothing. A failure is logged and counted (cilium_nomad_policy_errors_total
// {reason="audit"}), never fatal.
#include <memory>
#include <stop_token>
#include <string>
#include <vector>

#include <spdlog/fwd.h>

#include "common/cilium/client/cilium_api.h"
#include "common/util/backoff.h"
#include "common/util/clock.h"
#include "common/util/mutex.h"
#include "common/util/wakeup.h"
#include "labeler/policy/policy_audit.h"
#include "labeler/policy/policy_directory.h"
#include "labeler/policy/policy_settings.h"
#include "labeler/serve/call_recorder.h"
#include "labeler/serve/metrics.h"

namespace cn::labeler::policy {

class PolicyAuditor {
 public:
  PolicyAuditor(PolicySettings settings, cilium::CiliumApi& cilium, Clock& clock, Metrics& metrics,
                CallRecorder& calls, std::shared_ptr<spdlog::logger> log);

  // Passes until stop: on kick(), and after a failed one on the backoff.
  void run(std::stop_token stop) EXCLUDES(mu_);
  // Asks for a pass soon; cheap, callable from any thread, coalesced.
  void kick();
  // One pass now. Fails when something was left undone (it is retried by run()).
  [[nodiscard]] Status pass(std::stop_token stop = {});

  AuditRecord record() const EXCLUDES(mu_);

 private:
  [[nodiscard]] Result<std::vector<AuditPolicy>> audit_policies() const;
  [[nodiscard]] Result<bool> global_audit(std::stop_token stop);
  // PATCHes one endpoint; logs and counts a failure.
  bool set_audit(const AuditClaim& claim, bool enabled, std::stop_token stop);
  void save(AuditRecord next) EXCLUDES(mu_);
  Deadline call_deadline(std::stop_token stop) const;

  PolicySettings settings_;
  // Kept across passes: it rereads only files that changed, and the auditor is kicked after
  // every distributor pass and every labeled allocation.
  PolicyDirectory dir_;
  cilium::CiliumApi& cilium_;
  Clock& clock_;
  Metrics& metrics_;
  CallRecorder& calls_;
  std::shared_ptr<spdlog::logger> log_;
  bool global_logged_ = false;  // the pass thread only

  mutable Mutex mu_;
  AuditRecord record_ GUARDED_BY(mu_);
  std::string last_text_ GUARDED_BY(mu_);
  Wakeup wakeup_{true};  // kicked: the first run() pass re-checks what a restart left
};

}  // namespace cn::labeler::policy
