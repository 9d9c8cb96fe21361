#include "common/state/state_entry.h"

#include <expected>
#include <limits>
#include <map>
#include <set>

#include "common/state/state_lines.h"
#include "common/util/alloc_id.h"
#include "common/util/json_read.h"

namespace cn::state {
namespace {

using json = nlohmann::json;

constexpr const char* kTombstoneKey = "deleted_unix_ms";

// An int64 of the file's (ours, but read back as outside input): nullopt when it is not one.
std::optional<long long> state_file_int(const json& value) {
  auto ms = cn::json::integer_in_range(value, std::numeric_limits<long long>::min(),
                                       std::numeric_limits<long long>::max());
  if (!ms) return std::nullopt;
  return *ms;
}

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

std::expected<StateEntry, std::string> entry_from_json(const json& j,
                                                       const cn::json::JsonWhere& where) {
  cn::json::JsonReader r(j, where);
  StateEntry e;
  for (auto [key, field] :
       {std::pair{"ifname", &e.ifname}, {"netns", &e.netns}, {"added_at", &e.added_at}}) {
    r.read(key, *field);
  }
  r.read("ips", e.ips);
  r.read_int("added_unix_ms", e.added_unix_ms);
  r.with_object("nomad", [&](cn::json::JsonReader& nomad) {
    for (auto [key, field] : {std::pair{"region", &e.nomad.region},
                              {"namespace", &e.nomad.namespace_},
                              {"job", &e.nomad.job_id},
                              {"group", &e.nomad.group}}) {
      nomad.read(key, *field);
    }
  });
  r.with_object("labeled", [&](cn::json::JsonReader& labeled) {
    auto& info = e.labeled.emplace();
    labeled.read_int("endpoint_id", info.endpoint_id);
    labeled.read_int("identity", info.identity);
    labeled.read("labels", info.labels);
    labeled.read("at", info.at);
  });
  r.with_object("last_attempt", [&](cn::json::JsonReader& last) {
    auto& attempt = e.last_attempt.emplace();
    last.read("reason", attempt.reason);
    last.read("detail", attempt.detail);
    last.read("at", attempt.at);
  });
  if (!r.ok()) return std::unexpected("bad entry: " + r.error());
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
  return entry_from_json(j, "state entry");
}

std::string tombstone_to_text(long long deleted_unix_ms) {
  return std::string("{\"") + kTombstoneKey + "\":" + std::to_string(deleted_unix_ms) + "}";
}

std::optional<long long> tombstone_from_text(std::string_view text) {
  const std::string prefix = std::string("{\"") + kTombstoneKey + "\":";
  if (!text.starts_with(prefix)) return std::nullopt;
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || j.size() != 1) return std::nullopt;
  auto ms = state_file_int(j[kTombstoneKey]);
  if (!ms) return std::nullopt;
  return *ms;
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
  const auto version = schema == j.end() ? std::nullopt : state_file_int(*schema);
  if (!version) return std::unexpected("missing integer \"schema\"");
  if (*version != kSchemaVersion) return std::unexpected("unsupported schema " + schema->dump());
  StateDoc doc;
  auto allocs = j.find("allocations");
  if (allocs == j.end() || allocs->is_null()) return doc;
  if (!allocs->is_object()) return std::unexpected("\"allocations\" must be an object");
  const auto where = cn::json::JsonWhere("state").key("allocations");
  for (const auto& [id, value] : allocs->items()) {
    if (!cn::is_valid_alloc_id(id)) return std::unexpected("invalid allocation ID key");
    if (value.is_object() && value.contains(kTombstoneKey)) {
      auto ms = state_file_int(value[kTombstoneKey]);
      if (!ms || value.size() != 1) return std::unexpected("bad tombstone for " + id);
      doc.deleted.emplace(id, *ms);
      continue;
    }
    auto entry = entry_from_json(value, where.key(id));
    if (!entry) return std::unexpected(std::move(entry.error()));
    doc.allocations.emplace(id, std::move(*entry));
  }
  return doc;
}

}  // namespace cn::state
