#include "common/nomad/model/allocation.h"

#include <nlohmann/json.hpp>

#include "common/util/alloc_id.h"
#include "common/util/json_read.h"

namespace cn::nomad {

namespace {

using json::JsonReader;

bool is_client_terminal_status(std::string_view s) {
  return s == "complete" || s == "failed" || s == "lost";
}

void read_network_status(JsonReader& alloc, std::optional<NetworkStatus>& out) {
  const auto* ns = alloc.object("NetworkStatus");
  if (ns == nullptr) return;
  JsonReader r(*ns, alloc.path("NetworkStatus"));
  NetworkStatus status;
  r.read("InterfaceName", status.interface_name);
  r.read("Address", status.address);
  r.read("AddressIPv6", status.address_ipv6);
  if (!r.ok()) return alloc.fail(r.error());
  out = std::move(status);
}

void read_job(JsonReader& alloc, Allocation& out) {
  const auto* job = alloc.object("Job");
  if (job == nullptr) return;
  auto parsed = parse_job(*job, alloc.path("Job"));
  if (!parsed) return alloc.fail(parsed.error().message);
  out.job_modify_index = parsed->job_modify_index;
  out.job = std::move(*parsed);
}

}  // namespace

const json::Fields& allocation_fields() {
  static const json::Fields fields = {
      {"ID", {}},
      {"Namespace", {}},
      {"JobID", {}},
      {"TaskGroup", {}},
      {"Name", {}},
      {"NodeID", {}},
      {"ClientStatus", {}},
      {"DesiredStatus", {}},
      {"CreateIndex", {}},
      {"ModifyIndex", {}},
      {"AllocModifyIndex", {}},
      {"CreateTime", {}},
      {"ModifyTime", {}},
      {"NetworkStatus", {{"InterfaceName", {}}, {"Address", {}}, {"AddressIPv6", {}}}},
      {"Job", job_fields()}};
  return fields;
}

bool Allocation::is_terminal() const {
  return desired_status == "stop" || desired_status == "evict" || is_client_terminal();
}

bool Allocation::is_client_terminal() const {
  return is_client_terminal_status(client_status);
}

std::string_view Allocation::address() const {
  if (!network_status) return {};
  if (!network_status->address.empty()) return network_status->address;
  return network_status->address_ipv6;
}

Result<Allocation> parse_allocation(const nlohmann::json& value, std::string_view where) {
  JsonReader r(value, std::string(where));
  Allocation a;
  r.read("ID", a.id);
  r.read("Namespace", a.nomad_namespace);
  r.read("JobID", a.job_id);
  r.read("TaskGroup", a.task_group);
  r.read("Name", a.name);
  r.read("NodeID", a.node_id);
  r.read("ClientStatus", a.client_status);
  r.read("DesiredStatus", a.desired_status);
  r.read("CreateIndex", a.create_index);
  r.read("ModifyIndex", a.modify_index);
  r.read("AllocModifyIndex", a.alloc_modify_index);
  r.read("CreateTime", a.create_time);
  r.read("ModifyTime", a.modify_time);
  read_network_status(r, a.network_status);
  read_job(r, a);
  if (!r.ok()) return fail(r.error());
  if (!is_valid_alloc_id(a.id)) {
    std::string shown = a.id.size() > 64 ? a.id.substr(0, 64) + "..." : a.id;
    return fail(std::string(where) + ".ID: not a valid allocation ID: \"" + shown + "\"");
  }
  return a;
}

Result<Allocation> parse_allocation_text(std::string_view body) {
  auto doc = json::parse_json_text(body, "Allocation", allocation_fields());
  if (!doc) return std::unexpected(doc.error());
  return parse_allocation(*doc);
}

Result<AllocationList> parse_allocation_list(std::string_view body) {
  // A node's list is the labeler's biggest read (the Job rides along in every allocation):
  // only what parse_allocation() reads is built.
  auto doc = json::parse_json_text(body, "allocation list", allocation_fields());
  if (!doc) return std::unexpected(doc.error());
  AllocationList list;
  if (doc->is_null()) return list;
  if (!doc->is_array()) {
    return fail(std::string("allocation list: expected an array, got ") + doc->type_name());
  }
  list.allocations.reserve(doc->size());
  for (std::size_t i = 0; i < doc->size(); ++i) {
    auto alloc = parse_allocation((*doc)[i], "Allocation[" + std::to_string(i) + "]");
    if (alloc) {
      list.allocations.push_back(std::move(*alloc));
    } else {
      list.rejected.push_back(std::move(alloc.error()));
    }
  }
  return list;
}

}  // namespace cn::nomad
