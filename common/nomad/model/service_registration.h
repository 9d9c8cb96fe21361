#pragma once
// Nomad's native service registrations (provider "nomad"; nomad/structs/service_registration.go)
// as GET /v1/service/:name, /v1/allocation/:id/services and the Service event topic carry them,
// and the service list of GET /v1/services.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "common/util/json_where.h"
#include "common/util/result.h"

namespace cn::nomad {

struct ServiceRegistration {
  std::string id;  // "_nomad-task-<alloc>-<task or group-<group>>-<service>-<port label>"
  std::string service_name;
  std::string nomad_namespace;
  std::string node_id;
  std::string datacenter;
  std::string job_id;
  std::string alloc_id;
  // What the service's address_mode chose: the host's address, the allocation's, a driver's or
  // the job's own `address`, which may be a host name or "". Judged where it is used.
  std::string address;
  // Nomad's int, 0 when the service has no port; kept wide so that a value no port can have is
  // reported against its service instead of failing the whole answer.
  std::int64_t port = 0;
  std::vector<std::string> tags;
  std::uint64_t create_index = 0;
  std::uint64_t modify_index = 0;

  bool operator==(const ServiceRegistration&) const = default;
};

// One service of one namespace as GET /v1/services lists it.
struct ServiceListEntry {
  std::string nomad_namespace;
  std::string service_name;
};

// Body of GET /v1/service/:name (and of the allocation and job variants): a JSON array, null
// meaning none. A member of the wrong type fails the whole answer: the API's shape is broken.
[[nodiscard]] Result<std::vector<ServiceRegistration>> parse_service_registrations_text(
    std::string_view body);
// One registration object (an element of the list, or an event's Payload.Service).
[[nodiscard]] Result<ServiceRegistration> read_service_registration(const nlohmann::json& value,
                                                                    const json::JsonWhere& where);
// Body of GET /v1/services: [{"Namespace":..., "Services":[{"ServiceName":..., "Tags":[...]}]}].
[[nodiscard]] Result<std::vector<ServiceListEntry>> parse_service_list_text(std::string_view body);

}  // namespace cn::nomad
