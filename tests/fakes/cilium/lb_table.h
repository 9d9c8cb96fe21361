#pragma once
// The agent's load-balancer tables as the fake keeps them after reading --lb-state-file:
// services, the frontends derived from them and the backends each frontend selects (cilium/cilium
// pkg/loadbalancer: service.go, frontend.go, backend.go), and GET /v1/service's model of them
// (pkg/loadbalancer/cell/restapi.go, frontend.go ToModel).
#include <cstddef>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

namespace cn::fakes::cilium {

struct LbBackend {
  std::string address;  // as written in the slice
  std::uint16_t port = 0;
  std::string protocol;              // TCP, UDP or SCTP
  std::set<std::string> port_names;  // empty: an unnamed slice port, matches every frontend
  std::string state;                 // active, terminating, terminating-not-serving, maintenance
  std::string node_name;
  std::string zone;
  std::uint16_t weight = 100;
  bool ipv6 = false;
};

struct LbFrontend {
  std::uint32_t id = 0;  // assigned by the table owner; stable while the frontend exists
  std::string address;   // "0.0.0.0" / "::" for NodePort
  std::uint16_t port = 0;
  std::string protocol;  // the Service port's protocol, verbatim
  std::string type;      // ClusterIP, NodePort, LoadBalancer, ExternalIPs
  std::string scope;     // external or internal
  std::string port_name;
  std::string service;  // <namespace>/<name>
  bool ipv6 = false;
  std::vector<LbBackend> backends;  // the ones DefaultSelectBackends keeps for it
  // Identity of the frontend in the agent's table: address, port, protocol and scope.
  std::string key() const;
};

struct LbService {
  std::string name;  // <namespace>/<name>
  std::string ext_traffic_policy = "Cluster";
  std::string int_traffic_policy = "Cluster";
  bool session_affinity = false;
  std::uint32_t session_affinity_timeout_s = 0;
  std::map<std::string, std::string> labels;
  std::map<std::string, std::string> annotations;
  // Every backend whose slice links to this service, whether or not a frontend selects it.
  std::vector<LbBackend> backends;
};

struct LbTable {
  std::vector<LbService> services;    // sorted by name
  std::vector<LbFrontend> frontends;  // sorted by service, then as derived
  std::size_t slice_count = 0;        // EndpointSlices in the file (the log's backendCount)
  // The log's serviceCount and frontendCount: Service entries in the file and the frontends
  // they yield, counted before a later entry of the same name replaces an earlier one.
  std::size_t service_entries = 0;
  std::size_t derived_frontends = 0;

  const LbService* service(const std::string& name) const;
  std::vector<const LbFrontend*> frontends_of(const std::string& service) const;
  std::size_t backend_count() const;  // distinct (service, address, port, protocol)
};

// GET /v1/service: one Service model per frontend.
nlohmann::json lb_service_list_model(const LbTable& table);

}  // namespace cn::fakes::cilium
