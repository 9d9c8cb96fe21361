#include "labeler/policy/policy_audit.h"

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <map>
#include <utility>

#include <nlohmann/json.hpp>

#include "common/util/json_read.h"
#include "common/util/read_whole_file.h"
#include "labeler/policy/policy_subjects.h"

namespace cn::labeler::policy {
namespace {

using AuditClaimKey = std::pair<std::int64_t, std::string>;

AuditClaimKey audit_claim_key(const AuditClaim& claim) {
  return {claim.id, claim.attachment};
}

nlohmann::json audit_claims_json(const std::vector<AuditClaim>& claims) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& c : claims) {
    out.push_back({{"id", c.id}, {"attachment", c.attachment}, {"policies", c.policies}});
  }
  return out;
}

Status read_audit_claims(json::JsonReader& parent, std::string_view key,
                         std::vector<AuditClaim>& out) {
  const auto* list = parent.array(key);
  if (!parent.ok()) return fail(parent.error());
  if (list == nullptr) return {};
  for (std::size_t i = 0; i < list->size(); ++i) {
    json::JsonReader r((*list)[i], parent.at(key, i));
    AuditClaim claim;
    r.read("id", claim.id);
    r.read("attachment", claim.attachment);
    r.read("policies", claim.policies);
    if (!r.ok()) return fail(r.error());
    out.push_back(std::move(claim));
  }
  return {};
}

}  // namespace

AuditPlan plan_audit(const std::vector<AuditPolicy>& policies,
                     const std::vector<AuditEndpoint>& endpoints,
                     const std::vector<AuditClaim>& claims, bool global_audit, bool complete) {
  AuditPlan plan;
  std::map<AuditClaimKey, const AuditClaim*> claimed;
  for (const auto& c : claims) claimed[audit_claim_key(c)] = &c;
  std::map<AuditClaimKey, bool> listed;
  for (const auto& ep : endpoints) {
    AuditClaim want{ep.id, ep.attachment, {}};
    for (const auto& p : policies) {
      if (policy_selects(p.object, ep.labels)) want.policies.push_back(p.variable_path);
    }
    std::ranges::sort(want.policies);
    const auto key = audit_claim_key(want);
    listed[key] = true;
    const auto mine = claimed.find(key);
    const bool ours = mine != claimed.end();
    if (global_audit) {
      // The agent audits every endpoint: ours stay recorded (as selected now, or as they were)
      // for when the operator turns it off; nothing is switched either way.
      if (ours) plan.keep.push_back(want.policies.empty() ? *mine->second : want);
      continue;
    }
    if (want.policies.empty()) {
      // Already enforcing again (an agent restart resets options): the claim just ends.
      if (ours && ep.in_audit) plan.disable.push_back(*mine->second);
      continue;
    }
    if (!ep.in_audit) {
      // Not in audit: ours (the agent restarted it, or someone turned it off) or new.
      plan.enable.push_back(std::move(want));
    } else if (ours) {
      plan.keep.push_back(std::move(want));
    } else {
      plan.foreign.push_back(std::move(want));
    }
  }
  if (!complete) {
    // An endpoint the list could not show may still be there: its claim stays.
    for (const auto& c : claims) {
      if (!listed.contains(audit_claim_key(c))) plan.keep.push_back(c);
    }
  }
  return plan;
}

std::string to_text(const AuditRecord& record) {
  nlohmann::json doc = {{"global_audit", record.global_audit},
                        {"claims", audit_claims_json(record.claims)},
                        {"foreign", audit_claims_json(record.foreign)}};
  if (!record.last_error.empty()) doc["last_error"] = record.last_error;
  return doc.dump(2) + "\n";
}

Result<AuditRecord> parse_audit_record(std::string_view text) {
  auto doc = json::parse_json_text(text, "policy audit record");
  if (!doc) return std::unexpected(doc.error());
  if (!doc->is_object()) return fail("policy audit record: not a JSON object");
  json::JsonReader r(*doc, "policy audit record");
  AuditRecord record;
  r.read("global_audit", record.global_audit);
  r.read("last_error", record.last_error);
  if (!r.ok()) return fail(r.error());
  if (auto ok = read_audit_claims(r, "claims", record.claims); !ok)
    return std::unexpected(ok.error());
  if (auto ok = read_audit_claims(r, "foreign", record.foreign); !ok)
    return std::unexpected(ok.error());
  return record;
}

Result<AuditRecord> read_audit_record(const std::string& path) {
  constexpr std::size_t kMaxAuditRecordBytes = std::size_t{64} << 20;
  auto text = read_whole_file(path, kMaxAuditRecordBytes);
  if (!text && text.error().sys_errno == ENOENT) {
    return fail(ErrorKind::not_found, "no policy audit record at " + path);
  }
  if (!text) return std::unexpected(text.error());
  return parse_audit_record(*text);
}

std::string policy_audit_path(std::string_view state_file) {
  auto parent = std::filesystem::path(state_file).parent_path();
  return (parent.empty() ? std::filesystem::path(".") : parent).append("policy-audit.json");
}

}  // namespace cn::labeler::policy
