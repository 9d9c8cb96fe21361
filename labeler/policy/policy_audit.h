#pragma once
// The audit-mode decisions (docs/policies.md "Audit before enforce"), free of I/O: which
// endpoints of this node a set of audit-mode policies puts in Cilium's policy audit mode, and
// which the labeler turns back. The labeler owns only what it turned on (its claims, kept in a
// file beside the policy status file so that a restart still knows them): an endpoint someone
// else put in audit is never switched off, and with the agent's --policy-audit-mode on no
// endpoint is touched at all.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/labels/label_set.h"
#include "common/util/result.h"

namespace cn::labeler::policy {

struct AuditPolicy {
  std::string variable_path;  // or the file name when the file names no variable
  nlohmann::json object;      // the written policy object
};

struct AuditEndpoint {
  std::int64_t id = 0;
  // cni-attachment-id: an endpoint number is reused after a delete, so a claim holds both.
  std::string attachment;
  labels::LabelSet labels;  // identity labels, as the agent's selectors see them
  bool in_audit = false;    // spec.options.PolicyAuditMode Enabled
};

// An endpoint the labeler put in audit, and the policies that select it.
struct AuditClaim {
  std::int64_t id = 0;
  std::string attachment;
  std::vector<std::string> policies;  // variable paths, sorted

  friend bool operator==(const AuditClaim&, const AuditClaim&) = default;
};

struct AuditPlan {
  std::vector<AuditClaim> enable;   // PATCH Enabled, then claimed
  std::vector<AuditClaim> disable;  // claimed, no audit policy selects it: PATCH Disabled
  std::vector<AuditClaim> keep;     // claimed, selected and already in audit
  // Selected but already in audit without a claim of ours (an operator's PATCH): left alone,
  // and never switched off by us.
  std::vector<AuditClaim> foreign;
};

// `claims` are the ones recorded before; a claim whose endpoint is not listed is dropped (the
// endpoint is gone) unless `complete` is false (some elements of the list could not be read).
// `global_audit`: the agent's --policy-audit-mode is on; nothing is enabled or disabled and the
// claims stay as they are for when it is turned off.
AuditPlan plan_audit(const std::vector<AuditPolicy>& policies,
                     const std::vector<AuditEndpoint>& endpoints,
                     const std::vector<AuditClaim>& claims, bool global_audit, bool complete);

// The claims file (JSON, written atomically by the auditor; read by `policy status` and
// `explain`).
struct AuditRecord {
  bool global_audit = false;  // the agent's --policy-audit-mode, as last seen
  std::vector<AuditClaim> claims;
  std::vector<AuditClaim> foreign;
  std::string last_error;  // the last failed call, empty once a pass succeeded
};
std::string to_text(const AuditRecord& record);
// Strict: a file that does not parse fails with the reason (kind `invalid`).
[[nodiscard]] Result<AuditRecord> parse_audit_record(std::string_view text);
// Error kind not_found when there is no file.
[[nodiscard]] Result<AuditRecord> read_audit_record(const std::string& path);
// "<dir of state_file>/policy-audit.json".
std::string policy_audit_path(std::string_view state_file);

}  // namespace cn::labeler::policy
