#pragma once
// One allocation as recorded on this node. The plugin writes it on ADD; the labeler adds the
// `labeled` part once the endpoint carries its final labels, and `last_attempt` while it cannot.
#include <chrono>
#include <expected>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace cn::state {

inline constexpr int kSchemaVersion = 1;

struct NomadFields {
  std::string region;
  std::string namespace_;
  std::string job_id;
  std::string group;
  bool operator==(const NomadFields&) const = default;
};

struct LabeledInfo {
  long long endpoint_id = 0;
  long long identity = 0;
  std::vector<std::string> labels;
  std::string at;  // RFC 3339
  bool operator==(const LabeledInfo&) const = default;
};

// Why the labeler's last attempt on the allocation did not label it. Cleared by a labeling that
// succeeds; `state` and `explain` show it so that an operator need not search the logs.
struct LastAttempt {
  std::string reason;  // one value of cn::labeler::LabelFailure (labeler/labeling/label_failure.h)
  std::string detail;  // for people: what went wrong and, when known, the fix
  std::string at;      // RFC 3339: when this reason and detail were first recorded in a row
  bool operator==(const LastAttempt&) const = default;
};

struct StateEntry {
  std::string ifname;
  std::string netns;
  std::vector<std::string> ips;
  std::string added_at;  // RFC 3339, wall clock: for people reading the file
  long long added_unix_ms = 0;
  NomadFields nomad;
  std::optional<LabeledInfo> labeled;
  std::optional<LastAttempt> last_attempt;
  // Keys written by a newer version of either binary, kept so a downgrade loses nothing.
  nlohmann::json unknown = nlohmann::json::object();

  bool operator==(const StateEntry&) const = default;
};

// A DEL'd allocation leaves a tombstone (its ID and when) instead of vanishing, so that work
// already in flight for it (a worker, a resync's lists, a restarted labeler reading old lists)
// can tell "deleted" from "never recorded" and never brings the entry back. Only the plugin's
// ADD/CHECK replaces a tombstone; the labeler drops it after kTombstoneTtl.
inline constexpr std::chrono::hours kTombstoneTtl{1};

struct StateDoc {
  std::map<std::string, StateEntry> allocations;  // keyed by allocation ID
  std::map<std::string, long long> deleted;       // allocation ID -> unix ms of its DEL
  bool operator==(const StateDoc&) const = default;
};

nlohmann::json to_json(const StateDoc& doc);
// The file's text: valid JSON with one allocation per line, so that `grep <alloc id>` shows a
// whole entry and writing it costs a fraction of an indented dump (the plugin's hot path).
std::string to_text(const StateDoc& doc);
// One entry as it appears on its line, and back (strict like `state_from_json`).
std::string entry_to_text(const StateEntry& entry);
[[nodiscard]] std::expected<StateEntry, std::string> entry_from_text(std::string_view text);
// A tombstone's line body, and back (nullopt: the body is not a tombstone).
std::string tombstone_to_text(long long deleted_unix_ms);
std::optional<long long> tombstone_from_text(std::string_view text);
// Strict where a mistake would mislead (wrong types, bad alloc IDs); tolerant of unknown keys.
[[nodiscard]] std::expected<StateDoc, std::string> state_from_json(std::string_view text);

}  // namespace cn::state
