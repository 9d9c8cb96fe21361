#include "labeler/policy/policy_status.h"

#include <filesystem>

#include <nlohmann/json.hpp>

#include "common/util/json_read.h"
#include "common/util/read_whole_file.h"

namespace cn::labeler::policy {

std::string_view to_string(PolicyState state) {
  switch (state) {
    case PolicyState::applied:
      return "applied";
    case PolicyState::invalid:
      return "invalid";
    case PolicyState::pending:
      return "pending";
    case PolicyState::unsupported:
      return "unsupported";
    case PolicyState::not_delegated:
      return "not_delegated";
  }
  return "pending";
}

namespace {

Result<PolicyState> parse_state(std::string_view text) {
  for (PolicyState s : {PolicyState::applied, PolicyState::invalid, PolicyState::pending,
                        PolicyState::unsupported, PolicyState::not_delegated}) {
    if (to_string(s) == text) return s;
  }
  return fail("unknown policy state \"" + std::string(text) + "\"");
}

}  // namespace

std::string policy_record_key(std::string_view nomad_namespace, std::string_view variable_path) {
  return std::string(nomad_namespace) + "/" + std::string(variable_path);
}

std::string to_text(const PolicyStatus& status) {
  nlohmann::json policies = nlohmann::json::array();
  for (const auto& [path, r] : status.policies) {
    nlohmann::json p = {{"nomad_namespace", r.nomad_namespace},
                        {"variable_path", r.variable_path},
                        {"name", r.name},
                        {"file", r.file},
                        {"seen_index", r.seen_index},
                        {"applied_index", r.applied_index},
                        {"state", to_string(r.state)},
                        {"reason", r.reason},
                        {"changed_unix_ms", r.changed_unix_ms}};
    if (!r.option.empty()) p["option"] = r.option;
    if (!r.mode.empty()) p["mode"] = r.mode;
    policies.push_back(std::move(p));
  }
  nlohmann::json doc = {{"namespace", status.nomad_namespace},
                        {"prefix", status.prefix},
                        {"directory", status.directory},
                        {"updated_unix_ms", status.updated_unix_ms},
                        {"policies", std::move(policies)}};
  if (!status.agent_options.empty()) doc["agent_options"] = status.agent_options;
  return doc.dump(2) + "\n";
}

Result<PolicyStatus> parse_policy_status(std::string_view text) {
  auto doc = json::parse_json_text(text, "policy status");
  if (!doc) return std::unexpected(doc.error());
  if (!doc->is_object()) return fail("policy status: not a JSON object");
  json::JsonReader r(*doc, "policy status");
  PolicyStatus status;
  r.read("namespace", status.nomad_namespace);
  r.read("prefix", status.prefix);
  r.read("directory", status.directory);
  r.read("agent_options", status.agent_options);  // absent in older files
  std::int64_t updated = 0;
  r.read("updated_unix_ms", updated);
  status.updated_unix_ms = updated;
  const auto* list = r.array("policies");
  if (!r.ok()) return fail(r.error());
  if (list == nullptr) return status;
  for (std::size_t i = 0; i < list->size(); ++i) {
    json::JsonReader p((*list)[i], r.at("policies", i));
    PolicyRecord rec;
    std::string state;
    std::int64_t changed = 0;
    p.read("nomad_namespace", rec.nomad_namespace);  // absent in older files
    p.read("variable_path", rec.variable_path);
    p.read("name", rec.name);
    p.read("file", rec.file);
    p.read("seen_index", rec.seen_index);
    p.read("applied_index", rec.applied_index);
    p.read("state", state);
    p.read("reason", rec.reason);
    p.read("option", rec.option);  // absent in older files
    p.read("mode", rec.mode);      // absent in older files
    p.read("changed_unix_ms", changed);
    if (!p.ok()) return fail(p.error());
    auto parsed = parse_state(state);
    if (!parsed) return std::unexpected(parsed.error());
    rec.state = *parsed;
    rec.changed_unix_ms = changed;
    // Labelers before delegation read the one namespace the status names.
    if (rec.nomad_namespace.empty()) rec.nomad_namespace = status.nomad_namespace;
    status.policies[policy_record_key(rec.nomad_namespace, rec.variable_path)] = std::move(rec);
  }
  return status;
}

Result<PolicyStatus> read_policy_status(const std::string& path) {
  // Our own file: a record per policy, far below this even at the --policy-max-count bound.
  constexpr std::size_t kMaxStatusBytes = std::size_t{64} << 20;
  auto text = read_whole_file(path, kMaxStatusBytes);
  if (!text) return std::unexpected(text.error());
  return parse_policy_status(*text);
}

std::string policy_status_path(std::string_view state_file) {
  auto parent = std::filesystem::path(state_file).parent_path();
  return (parent.empty() ? std::filesystem::path(".") : parent).append("policy-status.json");
}

}  // namespace cn::labeler::policy
