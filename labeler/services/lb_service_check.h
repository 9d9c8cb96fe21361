#pragma once
// The gate between Nomad's registrations and the agent's state file. The agent rejects the
// whole file on one bad field or one frontend conflict, keeps its previous state and only logs
// (pkg/loadbalancer/reflectors/file.go in cilium/cilium): one bad service would freeze every
// other. So each service and backend is judged here, the bad ones are left out with the reason,
// and the rest always land.
#include <string>
#include <vector>

#include "labeler/services/lb_service.h"

namespace cn::labeler {

struct LbProblem {
  std::string nomad_namespace;
  std::string name;
  std::string alloc_id;  // empty: the whole service is left out; else only that backend
  std::string reason;

  bool operator==(const LbProblem&) const = default;
};

struct LbCheckOptions {
  // Agents before 1.19.5 keep a removed backend in a service when the same address:port is in
  // another service too (cilium/cilium#46493): while such agents are served, an address:port
  // stays in one service only.
  bool shared_backends_safe = false;
  // Backends inside the VIP range would loop through the load balancer; empty: not checked.
  std::vector<IpPrefix> vip_ranges;
};

struct LbCheckResult {
  std::vector<LbService> services;  // sorted by namespace, name; backends by allocation
  std::vector<LbProblem> problems;  // in the same order
};

// Never fails: what cannot be served is in `problems`. Ties (two services claiming one VIP or
// one backend) go to the first service in (namespace, name) order, so every node decides alike.
LbCheckResult check_lb_services(std::vector<LbService> candidates, const LbCheckOptions& options);

// Nomad's service name rule (nomad/structs/services.go ValidateName in hashicorp/nomad): an
// RFC 1123 label of letters (either case), digits and inner hyphens, 1..63 characters. Nomad
// checks it before interpolation, so a name built from a variable can still break it.
bool is_nomad_service_name(std::string_view name);

}  // namespace cn::labeler
