#include "labeler/commands/policy_status_command.h"

#include <filesystem>
#include <map>

#include "common/util/join.h"

#include "labeler/commands/text_table.h"
#include "labeler/policy/policy_audit.h"
#include "labeler/policy/policy_status.h"

namespace cn::labeler::policy {

namespace {

// "42s", "17m", "3h", "5d": how long ago, short enough for the narrow table.
std::string age_text(std::chrono::seconds age) {
  const long long s = std::max<long long>(0, age.count());
  if (s < 120) return std::to_string(s) + "s";
  if (s < 2LL * 3600) return std::to_string(s / 60) + "m";
  if (s < 2LL * 86400) return std::to_string(s / 3600) + "h";
  return std::to_string(s / 86400) + "d";
}

std::string file_cell(const PolicyRecord& rec, StatusView view) {
  if (rec.file.empty()) return "-";
  // The directory is the same for every row and the summary names it.
  return view == StatusView::wide ? rec.file : std::filesystem::path(rec.file).filename().string();
}

std::string changed_cell(const PolicyRecord& rec, StatusView view, Clock& clock) {
  if (!rec.changed_unix_ms) return "-";
  const auto changed = WallTime{std::chrono::milliseconds{rec.changed_unix_ms}};
  if (view == StatusView::wide) return rfc3339(changed);
  return age_text(std::chrono::duration_cast<std::chrono::seconds>(clock.wall_now() - changed)) +
         " ago";
}

// "audit <variable>: endpoints 12 34": the endpoints of this node each audit-mode policy holds
// in audit (docs/policies.md "Audit before enforce"); nothing when none is.
std::string audit_status_text(const std::string& audit_file) {
  auto audit = read_audit_record(audit_file);
  if (!audit) {
    return audit.error().kind == ErrorKind::not_found
               ? ""
               : "audit claims unreadable: " + audit.error().message + "\n";
  }
  std::map<std::string, std::vector<std::string>> by_policy;
  for (const auto& claim : audit->claims) {
    for (const auto& path : claim.policies) by_policy[path].push_back(std::to_string(claim.id));
  }
  std::string out;
  if (audit->global_audit)
    out += "agent policy-audit-mode is on: every endpoint is in audit, none is changed\n";
  for (const auto& [path, ids] : by_policy) {
    out += "audit " + path + ": endpoints " + join(ids, " ") + "\n";
  }
  std::vector<std::string> foreign;
  for (const auto& claim : audit->foreign) foreign.push_back(std::to_string(claim.id));
  if (!foreign.empty())
    out +=
        "already in audit, not by the labeler (left alone): endpoints " + join(foreign, " ") + "\n";
  if (!audit->last_error.empty()) out += "audit last error: " + audit->last_error + "\n";
  return out;
}

}  // namespace

Result<std::string> render_policy_status(const std::string& status_file, StatusView view,
                                         Clock& clock) {
  auto status = read_policy_status(status_file);
  if (!status) {
    Error error = status.error();
    if (error.kind != ErrorKind::invalid)
      error.message += " (is the labeler running with --policy-dir?)";
    return std::unexpected(std::move(error));
  }
  if (view == StatusView::json) return to_text(*status);

  std::vector<std::vector<std::string>> rows = {
      {"NAMESPACE", "VARIABLE", "FILE", "APPLIED", "CHANGED", "STATE"}};
  for (const auto& [key, rec] : status->policies) {
    std::string state(to_string(rec.state));
    // Enforce is the rule; only the exception takes room in a 100-column table.
    if (rec.mode == "audit") state += " (audit)";
    if (!rec.reason.empty()) state += ": " + rec.reason;
    rows.push_back({rec.nomad_namespace, rec.variable_path, file_cell(rec, view),
                    rec.applied_index ? std::to_string(rec.applied_index) : "-",
                    changed_cell(rec, view, clock), std::move(state)});
  }
  std::string out =
      view == StatusView::wide ? render_table(rows) : render_table(std::move(rows), kTableWidth);
  out += std::to_string(status->policies.size()) + " polic" +
         (status->policies.size() == 1 ? "y" : "ies") + " from *:" + status->prefix + " into " +
         status->directory + "\n";
  // Every namespace the token may list; the operator's may write any policy (docs/policies.md).
  out += "operator namespace: " + status->nomad_namespace + "\n";
  if (status->updated_unix_ms) {
    const auto updated = WallTime{std::chrono::milliseconds{status->updated_unix_ms}};
    const auto age = std::chrono::duration_cast<std::chrono::seconds>(clock.wall_now() - updated);
    out += "updated " + rfc3339(updated) + " (" + std::to_string(age.count()) + " s ago)";
    if (view == StatusView::table) out += "; --wide: whole cells, --json: for machines";
    out += "\n";
  }
  if (!status->agent_options.empty()) out += "agent options: " + status->agent_options + "\n";
  out += audit_status_text(policy_audit_path(status_file));
  return out;
}

}  // namespace cn::labeler::policy
