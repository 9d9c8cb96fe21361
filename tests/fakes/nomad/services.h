#pragma once
// Nomad native service registrations (provider "nomad") and Nomad check results as the fake
// stores them. Not thread-safe: FakeNomad guards the table with its state mutex, so a
// registration change and its events appear atomically.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace cn::fakes {

// nomad/structs/service_registration.go ServiceRegistration: the 12 fields on the wire.
struct ServiceRegistration {
  std::string id;
  std::string service_name;
  std::string namespace_;
  std::string node_id;
  std::string datacenter;
  std::string job_id;
  std::string alloc_id;
  std::vector<std::string> tags;
  std::string address;
  int port = 0;
  std::uint64_t create_index = 0;
  std::uint64_t modify_index = 0;
  // Not on the wire: the workload that registered it ("" for the group, else the task).
  std::string task;

  // The state store's Equal: indexes ignored, tags compared as sets.
  bool same_content(const ServiceRegistration& other) const;
};

// _nomad-task-<alloc>-<task | group-<group>>-<service>-<port label>
// (client/serviceregistration/id.go, workload.go).
std::string service_registration_id(const std::string& alloc_id, const std::string& task,
                                    const std::string& group, const std::string& service_name,
                                    const std::string& port_label);

// All 12 keys, sorted, Tags [] when empty: the struct has no omitempty.
nlohmann::json encode_service_registration(const ServiceRegistration& reg);

// The service_registrations table: rows keyed (Namespace, ID) like its id index, and one
// table-wide index every change moves (there are no tombstones, so deletes move it too).
class ServiceTable {
 public:
  using Key = std::pair<std::string, std::string>;  // (namespace, ID)

  // False, and nothing changes, when an equal registration is stored already. A changed row
  // keeps its CreateIndex.
  bool upsert(ServiceRegistration reg, std::uint64_t index);
  std::optional<ServiceRegistration> remove(const std::string& ns, const std::string& id,
                                            std::uint64_t index);
  // The index blocking reads answer, floored to 1 as Nomad never reports 0.
  std::uint64_t index() const { return index_ < 1 ? 1 : index_; }
  const std::map<Key, ServiceRegistration>& rows() const { return rows_; }
  std::vector<ServiceRegistration> of_alloc(const std::string& alloc_id) const;
  // What a blocking query watches: a counter per watched set, moved by each change in it.
  // Keys: watch_name(ns, name), watch_namespace(ns), watch_alloc(id), watch_job(ns, job), "".
  std::uint64_t version(const std::string& watch_key) const;
  static std::string watch_name(const std::string& ns, const std::string& name);
  static std::string watch_namespace(const std::string& ns);
  static std::string watch_alloc(const std::string& alloc_id);
  static std::string watch_job(const std::string& ns, const std::string& job_id);
  // A snapshot restore to an older index: rows and the table index clamped to it.
  void clamp(std::uint64_t index);

 private:
  void touch(const ServiceRegistration& reg);

  std::map<Key, ServiceRegistration> rows_;
  std::uint64_t index_ = 0;
  std::map<std::string, std::uint64_t> versions_;
};

// The rendezvous hash `?choose=<n>|<key>` sorts by: hex digest over Port (8 bytes big-endian),
// AllocID, ID, Namespace, Address, ServiceName, each tag, then the key; MD5 before 2.0.5,
// SHA-256 from it (nomad/structs/service_registration.go HashWith).
std::string choose_hash(const ServiceRegistration& reg, const std::string& key, bool sha256);

// One Nomad check result as the client's checks hook keeps it
// (nomad/structs/checks.go CheckQueryResult).
struct CheckResult {
  std::string id;
  std::string check;
  std::string group;  // the alloc name, e.g. web.app[0]
  std::string service;
  std::string task;  // empty for group services: omitted on the wire
  std::string mode = "healthiness";
  std::string status = "pending";
  std::string output = "nomad: waiting to run";
  int status_code = 0;         // 0: omitted on the wire
  std::int64_t timestamp = 0;  // Unix seconds
};

// Opaque check ID: hex digest over the alloc, group and check identity; MD5 (32 hex) before
// 2.0.5, SHA-256 (64 hex) from it.
std::string check_id(const std::string& alloc_id, const std::string& group,
                     const std::string& service, const std::string& check, bool sha256);

nlohmann::json encode_check_result(const CheckResult& result);

// Nomad versions as "1.9.7" (suffixes like "+ent" or "-beta.1" ignored): true when `version`
// is at least major.minor.patch.
bool version_at_least(const std::string& version, int major, int minor, int patch);

}  // namespace cn::fakes
