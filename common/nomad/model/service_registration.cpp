#include "common/nomad/model/service_registration.h"

#include <nlohmann/json.hpp>

#include "common/util/json_read.h"

namespace cn::nomad {

namespace {

using json::JsonReader;

void read_fields(JsonReader& r, ServiceRegistration& s) {
  r.read("ID", s.id);
  r.read("ServiceName", s.service_name);
  r.read("Namespace", s.nomad_namespace);
  r.read("NodeID", s.node_id);
  r.read("Datacenter", s.datacenter);
  r.read("JobID", s.job_id);
  r.read("AllocID", s.alloc_id);
  r.read("Address", s.address);
  r.read("Port", s.port);
  r.read("Tags", s.tags);
  r.read("CreateIndex", s.create_index);
  r.read("ModifyIndex", s.modify_index);
  // Nomad's primary key is (Namespace, ID) and every registration belongs to an allocation and
  // a named service: one without them cannot be tracked or removed later.
  for (const char* key : {"ID", "ServiceName", "Namespace", "AllocID"}) {
    if (r.ok() && !r.has(key)) r.fail_at(key, "missing");
  }
  if (r.ok() &&
      (s.id.empty() || s.service_name.empty() || s.nomad_namespace.empty() || s.alloc_id.empty())) {
    r.fail_here("ID, ServiceName, Namespace and AllocID must not be empty");
  }
}

}  // namespace

Result<ServiceRegistration> read_service_registration(const nlohmann::json& value,
                                                      const json::JsonWhere& where) {
  JsonReader r(value, where);
  if (!value.is_object()) {
    r.fail_here("expected an object");
    return fail(r.error());
  }
  ServiceRegistration s;
  read_fields(r, s);
  if (!r.ok()) return fail(r.error());
  return s;
}

Result<std::vector<ServiceRegistration>> parse_service_registrations_text(std::string_view body) {
  auto doc = json::parse_json_text(body, "service registrations");
  if (!doc) return std::unexpected(doc.error());
  if (doc->is_null()) return std::vector<ServiceRegistration>{};
  if (!doc->is_array()) return fail("service registrations: not a JSON array");
  std::vector<ServiceRegistration> out;
  out.reserve(doc->size());
  for (std::size_t i = 0; i < doc->size(); ++i) {
    auto s =
        read_service_registration((*doc)[i], json::JsonWhere("service registrations").index(i));
    if (!s) return std::unexpected(s.error());
    out.push_back(std::move(*s));
  }
  return out;
}

Result<std::vector<ServiceListEntry>> parse_service_list_text(std::string_view body) {
  auto doc = json::parse_json_text(body, "service list");
  if (!doc) return std::unexpected(doc.error());
  if (doc->is_null()) return std::vector<ServiceListEntry>{};
  if (!doc->is_array()) return fail("service list: not a JSON array");
  std::vector<ServiceListEntry> out;
  for (std::size_t i = 0; i < doc->size(); ++i) {
    JsonReader ns((*doc)[i], json::JsonWhere("service list").index(i));
    std::string nomad_namespace;
    ns.read_required("Namespace", nomad_namespace);
    const auto* services = ns.array("Services");
    if (!ns.ok()) return fail(ns.error());
    if (services == nullptr) continue;
    for (std::size_t j = 0; j < services->size(); ++j) {
      JsonReader r((*services)[j], ns.at("Services", j));
      ServiceListEntry entry{nomad_namespace, {}};
      r.read_required("ServiceName", entry.service_name);
      if (!r.ok()) return fail(r.error());
      out.push_back(std::move(entry));
    }
  }
  return out;
}

}  // namespace cn::nomad
