#include "common/nomad/model/alloc_checks.h"

#include <nlohmann/json.hpp>

#include "common/util/json_read.h"

namespace cn::nomad {

std::string_view to_string(CheckStatus status) {
  switch (status) {
    case CheckStatus::pending:
      return "pending";
    case CheckStatus::success:
      return "success";
    case CheckStatus::failure:
      return "failure";
  }
  return "pending";
}

Result<std::vector<CheckResult>> parse_alloc_checks_text(std::string_view body) {
  auto doc = json::parse_json_text(body, "allocation checks");
  if (!doc) return std::unexpected(doc.error());
  if (doc->is_null()) return std::vector<CheckResult>{};
  if (!doc->is_object()) return fail("allocation checks: not a JSON object");
  std::vector<CheckResult> out;
  out.reserve(doc->size());
  for (const auto& [key, value] : doc->items()) {
    json::JsonReader r(value, json::JsonWhere("allocation checks").key(key));
    CheckResult c;
    std::string status;
    std::string mode;
    r.read("ID", c.id);
    r.read("Check", c.check);
    r.read("Service", c.service);
    r.read("Task", c.task);
    r.read_required("Status", status);
    r.read("Mode", mode);
    r.read("Timestamp", c.timestamp);
    if (!r.ok()) return fail(r.error());
    // A status this reader does not know counts as not passing: an instance is ready only on a
    // result that says so.
    c.status = CheckStatus::failure;
    if (status == "success") c.status = CheckStatus::success;
    if (status == "pending") c.status = CheckStatus::pending;
    c.readiness = mode == "readiness";
    if (c.id.empty()) c.id = key;
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace cn::nomad
