#include "common/state/state_entry.h"

#include <expected>
#include <map>
#include <set>
#include <stdexcept>

#include "common/state/state_lines.h"
#include "common/util/alloc_id.h"

namespace cn::state {
namespace {

using json = nlohmann::json;

constexpr const char* kTombstoneKey = "deleted_unix_ms";

json entry_to_json(const StateEntry& e) {
  json j = e.unknown.is_object() ? e.unknown : json::object();
  j["ifname"] = e.ifname;
  j["netns"] = e.netns;
  j["ips"] = e.ips;
  j["added_at"] = e.added_at;
  j["added_unix_ms"] = e.added_unix_ms;
  json nomad = json::object();
  if (!e.nomad.region.empty()) nomad["region"] = e.nomad.region;
  if (!e.nomad.namespace_.empty()) nomad["namespace"] = e.nomad.namespace_;
  if (!e.nomad.job_id.empty()) nomad["job"] = e.nomad.job_id;
  if (!e.nomad.group.empty()) nomad["group"] = e.nomad.group;
  j["nomad"] = std::move(nomad);
  if (e.labeled) {
    j["labeled"] = {{"endpoint_id", e.labeled->endpoint_id},
                    {"identity", e.labeled->identity},
                    {"labels", e.labeled->labels},
                    {"at", e.labeled->at}};
  } else {
    j.erase("labeled");
  }
  if (e.last_attempt) {
    j["last_attempt"] = {{"reason", e.last_attempt->reason},
                         {"detail", e.last_attempt->detail},
                         {"at", e.last_attempt->at}};
  } else {
    j.erase("last_attempt");
  }
  return j;
}

std::string get_string(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return {};
  if (!it->is_string()) throw std::invalid_argument(std::string(key) + " must be a string");
  return it->get<std::string>();
}

long long get_int(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return 0;
  if (!it->is_number_integer())
    throw std::invalid_argument(std::string(key) + " must be an integer");
  return it->get<long long>();
}

std::vector<std::string> get_strings(const json& j, const char* key) {
  std::vector<std::string> out;
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return out;
  if (!it->is_array()) throw std::invalid_argument(std::string(key) + " must be an array");
  for (const auto& v : *it) {
    if (!v.is_string()) throw std::invalid_argument(std::string(key) + " must hold strings");
    out.push_back(v.get<std::string>());
  }
  return out;
}

StateEntry entry_from_json(const json& j) {
  if (!j.is_object()) throw std::invalid_argument("entry must be an object");
  StateEntry e;
  e.ifname = get_string(j, "ifname");
  e.netns = get_string(j, "netns");
  e.ips = get_strings(j, "ips");
  e.added_at = get_string(j, "added_at");
  e.added_unix_ms = get_int(j, "added_unix_ms");
  if (auto it = j.find("nomad"); it != j.end() && !it->is_null()) {
    if (!it->is_object()) throw std::invalid_argument("nomad must be an object");
    e.nomad = {get_string(*it, "region"), get_string(*it, "namespace"), get_string(*it, "job"),
               get_string(*it, "group")};
  }
  if (auto it = j.find("labeled"); it != j.end() && !it->is_null()) {
    if (!it->is_object()) throw std::invalid_argument("labeled must be an object");
    e.labeled = LabeledInfo{get_int(*it, "endpoint_id"), get_int(*it, "identity"),
                            get_strings(*it, "labels"), get_string(*it, "at")};
  }
  if (auto it = j.find("last_attempt"); it != j.end() && !it->is_null()) {
    if (!it->is_object()) throw std::invalid_argument("last_attempt must be an object");
    e.last_attempt =
        LastAttempt{get_string(*it, "reason"), get_string(*it, "detail"), get_string(*it, "at")};
  }
  for (const auto& [key, value] : j.items()) {
    static const std::set<std::string> known = {
        "ifname", "netns", "ips", "added_at", "added_unix_ms", "nomad", "labeled", "last_attempt"};
    if (!known.contains(key)) e.unknown[key] = value;
  }
  return e;
}

}  // namespace

json to_json(const StateDoc& doc) {
  json allocs = json::object();
  for (const auto& [id, ms] : doc.deleted) allocs[id] = {{kTombstoneKey, ms}};
  for (const auto& [id, entry] : doc.allocations) allocs[id] = entry_to_json(entry);
  return {{"schema", kSchemaVersion}, {"allocations", std::move(allocs)}};
}

std::string entry_to_text(const StateEntry& entry) {
  return entry_to_json(entry).dump(-1, ' ', false, json::error_handler_t::replace);
}

std::expected<StateEntry, std::string> entry_from_text(std::string_view text) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return std::unexpected("not valid JSON");
  try {
    return entry_from_json(j);
  } catch (const std::exception& e) {
    return std::unexpected(std::string("bad entry: ") + e.what());
  }
}

std::string tombstone_to_text(long long deleted_unix_ms) {
  return std::string("{\"") + kTombstoneKey + "\":" + std::to_string(deleted_unix_ms) + "}";
}

std::optional<long long> tombstone_from_text(std::string_view text) {
  const std::string prefix = std::string("{\"") + kTombstoneKey + "\":";
  if (!text.starts_with(prefix)) return std::nullopt;
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || j.size() != 1) return std::nullopt;
  const auto& ms = j[kTombstoneKey];
  if (!ms.is_number_integer()) return std::nullopt;
  return ms.get<long long>();
}

std::string to_text(const StateDoc& doc) {
  // Entries and tombstones share the ID space (ADD replaces a tombstone, DEL an entry): one
  // sorted run of lines, as the line framing wants.
  std::map<std::string_view, std::string> bodies;
  for (const auto& [id, entry] : doc.allocations) bodies.emplace(id, entry_to_text(entry));
  for (const auto& [id, ms] : doc.deleted) bodies.try_emplace(id, tombstone_to_text(ms));
  std::vector<StateLine> lines;
  lines.reserve(bodies.size());
  for (const auto& [id, body] : bodies) lines.push_back({id, body});
  return join_state_lines(lines);
}

std::expected<StateDoc, std::string> state_from_json(std::string_view text) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return std::unexpected("not valid JSON");
  if (!j.is_object()) return std::unexpected("top level must be an object");
  auto schema = j.find("schema");
  if (schema == j.end() || !schema->is_number_integer()) {
    return std::unexpected("missing integer \"schema\"");
  }
  if (schema->get<long long>() != kSchemaVersion) {
    return std::unexpected("unsupported schema " + schema->dump());
  }
  StateDoc doc;
  auto allocs = j.find("allocations");
  if (allocs == j.end() || allocs->is_null()) return doc;
  if (!allocs->is_object()) return std::unexpected("\"allocations\" must be an object");
  try {
    for (const auto& [id, value] : allocs->items()) {
      if (!cn::is_valid_alloc_id(id)) return std::unexpected("invalid allocation ID key");
      if (value.is_object() && value.contains(kTombstoneKey)) {
        const auto& ms = value[kTombstoneKey];
        if (!ms.is_number_integer() || value.size() != 1)
          return std::unexpected("bad tombstone for " + id);
        doc.deleted.emplace(id, ms.get<long long>());
        continue;
      }
      doc.allocations.emplace(id, entry_from_json(value));
    }
  } catch (const std::exception& e) {
    return std::unexpected(std::string("bad entry: ") + e.what());
  }
  return doc;
}

}  // namespace cn::state
