#pragma once
// From what Nomad says to what Cilium should serve: registrations grouped into services, each
// instance's address, ports and health, each service's VIP and frontend ports. Pure: the daemon
// gathers the inputs, check_lb_services (lb_service_check.h) judges the result.
#include <map>
#include <string>
#include <vector>

#include "common/nomad/model/allocation.h"
#include "common/nomad/model/service_registration.h"
#include "labeler/services/lb_service.h"
#include "labeler/services/lb_service_check.h"

namespace cn::labeler {

// Which address Nomad registered, from the service's address_mode (nomad-services: "How Address
// and Port are chosen"): the allocation's own IP ("alloc", which keeps policy enforcement end
// to end) or the host's ("host", what the default "auto" gives a CNI allocation).
enum class AddressMode { alloc, host, other, unknown };
std::string_view to_string(AddressMode mode);

struct InstanceHealth {
  BackendState state = BackendState::not_ready;
  std::string reason;  // why not ready

  bool operator==(const InstanceHealth&) const = default;
};

struct CatalogInput {
  std::vector<nomad::ServiceRegistration> registrations;
  // The allocations behind the registrations, by ID (ports, status, network); an instance whose
  // allocation is missing is still served, with what its registration says.
  std::map<std::string, nomad::Allocation> allocations;
  // By instance_health_key(); missing: not ready, no report from its node yet.
  std::map<std::string, InstanceHealth> health;
  // By vip_service_key(): the VIP table's assignments.
  std::map<std::string, IpPrefix> vips;
};

struct CatalogService {
  std::string nomad_namespace;
  std::string name;
  std::map<AddressMode, int> modes;  // instances per address mode, for `services`
};

struct Catalog {
  std::vector<LbService> services;        // candidates for check_lb_services
  std::vector<LbProblem> problems;        // what never became a candidate, and why
  std::vector<CatalogService> described;  // every service seen, candidate or not
};

std::string instance_health_key(std::string_view alloc_id, std::string_view service_name);

// The port label of a registration, from its ID "_nomad-task-<alloc>-<owner>-<service>-<label>"
// (client/serviceregistration/id.go in hashicorp/nomad); "" when the service has no label.
std::string port_label_of(const nomad::ServiceRegistration& registration);

Catalog build_catalog(const CatalogInput& input);

}  // namespace cn::labeler
