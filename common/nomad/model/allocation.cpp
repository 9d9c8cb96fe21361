#include "common/nomad/model/allocation.h"

#include <map>
#include <nlohmann/json.hpp>
#include <tuple>

#include "common/util/alloc_id.h"
#include "common/util/json_read.h"

namespace cn::nomad {

namespace {

using json::JsonReader;

bool is_client_terminal_status(std::string_view s) {
  return s == "complete" || s == "failed" || s == "lost";
}

void read_network_status(JsonReader& alloc, std::optional<NetworkStatus>& out) {
  NetworkStatus status;
  const bool present = alloc.with_object("NetworkStatus", [&](JsonReader& r) {
    r.read("InterfaceName", status.interface_name);
    r.read("Address", status.address);
    r.read("AddressIPv6", status.address_ipv6);
  });
  if (present && alloc.ok()) out = std::move(status);
}

void read_ports(JsonReader& alloc, std::vector<AllocPort>& out) {
  alloc.with_object("AllocatedResources", [&](JsonReader& resources) {
    resources.with_object("Shared", [&](JsonReader& shared) {
      const auto* ports = shared.array("Ports");
      if (ports == nullptr) return;
      for (std::size_t i = 0; i < ports->size(); ++i) {
        JsonReader r((*ports)[i], shared.at("Ports", i));
        AllocPort p;
        r.read("Label", p.label);
        r.read("Value", p.value);
        r.read("To", p.to);
        r.read("HostIP", p.host_ip);
        if (!r.ok()) return shared.fail(r.error());
        out.push_back(std::move(p));
      }
    });
  });
}

void read_job(JsonReader& alloc, Allocation& out) {
  const auto* job = alloc.object("Job");
  if (job == nullptr) return;
  auto parsed = parse_job(*job, alloc.at("Job"));
  if (!parsed) return alloc.fail(parsed.error().message);
  out.job_modify_index = parsed->job_modify_index;
  out.job = std::move(*parsed);
}

// Every member of the Job model but the spec's content: Nomad bumps Version and JobModifyIndex
// together on any change to the spec (meta, groups, parent, type), so it finds the one Job a
// list's allocations of a version share. It proves nothing about the rest of the text (a body
// may give two Jobs the same version and different meta, or make one of them undecodable), so a
// decoded Job is reused only for the same bytes.
using JobVersion =
    std::tuple<std::string, std::string, std::uint64_t, std::uint64_t, std::uint64_t>;

struct DecodedJob {
  std::string_view text;  // in the list's body, which outlives the decode
  Job job;
};

const json::Fields& job_version_fields() {
  static const json::Fields fields = {
      {"Namespace", {}}, {"ID", {}}, {"Version", {}}, {"JobModifyIndex", {}}, {"ModifyIndex", {}}};
  return fields;
}

// allocation_fields() without the Job, decoded from its text when selected (parse_allocation_list).
const json::Fields& fields_without_job() {
  static const json::Fields fields = [] {
    json::Fields without = allocation_fields();
    std::erase_if(without.members, [](const auto& member) { return member.first == "Job"; });
    return without;
  }();
  return fields;
}

// allocation_fields() with, of the Job, only what tells its versions apart.
const json::Fields& fields_with_job_version() {
  static const json::Fields fields = [] {
    json::Fields with_version = allocation_fields();
    for (auto& [name, members] : with_version.members) {
      if (name == "Job") members = job_version_fields();
    }
    return with_version;
  }();
  return fields;
}

std::optional<JobVersion> job_version_of(const nlohmann::json& version) {
  json::JsonReader r(version, "Job");
  JobVersion v;
  r.read("Namespace", std::get<0>(v));
  r.read("ID", std::get<1>(v));
  r.read("Version", std::get<2>(v));
  r.read("JobModifyIndex", std::get<3>(v));
  r.read("ModifyIndex", std::get<4>(v));
  if (!r.ok()) return std::nullopt;  // the full decode reports it
  return v;
}

// A Job's text, deferred by the list's scanner: the element sits two containers deep (the list,
// the allocation).
Result<Job> read_deferred_job(std::string_view text, const json::JsonWhere& where) {
  auto doc = json::parse_json_text(text, where.describe(), job_fields(), 128 - 2);
  if (!doc) return std::unexpected(doc.error());
  return parse_job(*doc, where);
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
      {"AllocatedResources",
       {{"Shared", {{"Ports", {{"Label", {}}, {"Value", {}}, {"To", {}}, {"HostIP", {}}}}}}}},
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

Result<Allocation> parse_allocation(const nlohmann::json& value, const json::JsonWhere& where) {
  JsonReader r(value, where);
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
  read_ports(r, a.ports);
  read_job(r, a);
  if (!r.ok()) return fail(r.error());
  if (!is_valid_alloc_id(a.id)) {
    std::string shown = a.id.size() > 64 ? a.id.substr(0, 64) + "..." : a.id;
    return fail(where.key("ID").error("not a valid allocation ID: \"" + shown + "\""));
  }
  return a;
}

Result<Allocation> parse_allocation_text(std::string_view body) {
  auto doc = json::parse_json_text(body, "Allocation", allocation_fields());
  if (!doc) return std::unexpected(doc.error());
  return parse_allocation(*doc);
}

Result<AllocationList> parse_allocation_list(std::string_view body) {
  return parse_allocation_list(body, {});
}

// A node's list is the labeler's biggest read (the Job rides along in every allocation): only
// what parse_allocation() reads is built, and each element's Job is decoded when asked for, once
// per job version (a node runs many allocations of few versions; the same JSON each time).
Result<AllocationList> parse_allocation_list(std::string_view body,
                                             const AllocationSelector& with_job) {
  AllocationList list;
  std::map<JobVersion, DecodedJob> decoded;
  std::size_t i = 0;
  // Decoding every Job (a reconcile), each version is decoded once: its few distinguishing
  // members are built with every element to look it up. A selector (the node watch) picks few,
  // so they are decoded without that lookup, and the other elements build nothing of theirs.
  auto status = json::parse_json_list(
      body, "allocation list", with_job ? fields_without_job() : fields_with_job_version(), "Job",
      [&](nlohmann::json&& element, std::string_view job_text) {
        const auto where = json::JsonWhere("allocation list").index(i++);
        std::optional<JobVersion> version;
        if (auto it = element.find("Job"); element.is_object() && it != element.end()) {
          if (it->is_object()) version = job_version_of(*it);
          element.erase(it);  // parse_allocation must not read the stand-in as the Job
        }
        auto alloc = parse_allocation(element, where);
        if (alloc && !job_text.empty() && (!with_job || with_job(alloc->id, alloc->modify_index))) {
          auto known = version ? decoded.find(*version) : decoded.end();
          const bool reuse = known != decoded.end() && known->second.text == job_text;
          Result<Job> job = reuse ? Result<Job>(known->second.job)
                                  : read_deferred_job(job_text, where.key("Job"));
          if (job && version && known == decoded.end()) {
            decoded.emplace(*version, DecodedJob{job_text, *job});
          }
          if (job) {
            alloc->job_modify_index = job->job_modify_index;
            alloc->job = std::move(*job);
          } else {
            alloc = std::unexpected(std::move(job.error()));
          }
        }
        if (alloc) {
          list.allocations.push_back(std::move(*alloc));
        } else {
          list.rejected.push_back(std::move(alloc.error()));
        }
      });
  if (!status) return std::unexpected(status.error());
  return list;
}

}  // namespace cn::nomad
