#include "labeler/commands/state_command.h"

#include <nlohmann/json.hpp>

#include "common/state/state_store.h"
#include "labeler/commands/text_table.h"

namespace cn::labeler {

Result<std::string> render_state(const std::string& state_file, bool as_json) {
  auto doc = state::read_state_file(state_file);
  if (!doc) return std::unexpected(doc.error());
  // Tombstones of DEL'd allocations are bookkeeping, not allocations on this node.
  doc->deleted.clear();
  if (as_json) {
    return state::to_json(*doc)["allocations"].dump(2, ' ', false,
                                                    nlohmann::json::error_handler_t::replace) +
           "\n";
  }
  std::vector<std::vector<std::string>> rows = {{"ALLOCATION", "IFNAME", "IPS", "NAMESPACE", "JOB",
                                                 "GROUP", "ENDPOINT", "IDENTITY", "ADDED",
                                                 "LABELED", "REASON"}};
  for (const auto& [id, e] : doc->allocations) {
    std::string ips;
    for (const auto& ip : e.ips) ips += (ips.empty() ? "" : ",") + ip;
    auto or_dash = [](const std::string& s) { return s.empty() ? std::string("-") : s; };
    rows.push_back(
        {id, or_dash(e.ifname), or_dash(ips), or_dash(e.nomad.namespace_), or_dash(e.nomad.job_id),
         or_dash(e.nomad.group), e.labeled ? std::to_string(e.labeled->endpoint_id) : "-",
         e.labeled ? (e.labeled->identity ? std::to_string(e.labeled->identity) : "resolving")
                   : "-",
         or_dash(e.added_at), e.labeled ? e.labeled->at : "no",
         // Why the labeler's last attempt failed (labeler/labeling/label_failure.h); the detail is
         // in
         // --json and `explain`.
         e.last_attempt ? or_dash(e.last_attempt->reason) : "-"});
  }
  std::string out = render_table(rows);
  out += std::to_string(doc->allocations.size()) + " allocation(s) in " + state_file + "\n";
  return out;
}

}  // namespace cn::labeler
