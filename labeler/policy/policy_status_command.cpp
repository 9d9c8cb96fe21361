#include "labeler/policy/policy_status_command.h"

#include <cerrno>
#include <fstream>
#include <sstream>

#include "labeler/policy/policy_status.h"
#include "labeler/text_table.h"

namespace cn::labeler::policy {

Result<std::string> render_policy_status(const std::string& status_file, bool as_json,
                                         Clock& clock) {
  std::ifstream in(status_file, std::ios::binary);
  if (!in) {
    const int err = errno;
    return fail_errno(errno_text(err) + " (is the labeler running with --policy-dir?)", err);
  }
  std::ostringstream text;
  text << in.rdbuf();
  auto status = parse_policy_status(text.str());
  if (!status) return std::unexpected(status.error());
  if (as_json) return to_text(*status);

  std::vector<std::vector<std::string>> rows = {
      {"VARIABLE", "FILE", "APPLIED", "STATE", "CHANGED"}};
  for (const auto& [path, rec] : status->policies) {
    std::string state(to_string(rec.state));
    if (!rec.reason.empty()) state += ": " + rec.reason;
    rows.push_back({path, rec.file.empty() ? "-" : rec.file,
                    rec.applied_index ? std::to_string(rec.applied_index) : "-", std::move(state),
                    rec.changed_unix_ms
                        ? rfc3339(WallTime{std::chrono::milliseconds{rec.changed_unix_ms}})
                        : "-"});
  }
  std::string out = render_table(rows);
  out += std::to_string(status->policies.size()) + " polic" +
         (status->policies.size() == 1 ? "y" : "ies") + " from " + status->nomad_namespace + ":" +
         status->prefix + " into " + status->directory;
  if (status->updated_unix_ms) {
    const auto updated = WallTime{std::chrono::milliseconds{status->updated_unix_ms}};
    const auto age = std::chrono::duration_cast<std::chrono::seconds>(clock.wall_now() - updated);
    out += ", updated " + rfc3339(updated) + " (" + std::to_string(age.count()) + " s ago)";
  }
  return out + "\n";
}

}  // namespace cn::labeler::policy
