#pragma once
// The agent's REST load-balancer services of Cilium 1.16 and 1.17: one service is one frontend
// ip:port/protocol with its backends, `ServiceSpec` in api/v1/openapi.yaml of cilium/cilium.
// Read from GET /v1/service, written with PUT /v1/service/{id}, whose handler is
// daemon/cmd/loadbalancer.go (1.16) and pkg/service/service_api_handler.go (1.17) in
// cilium/cilium; the comments on the fields below say what each handler makes of them.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/util/result.h"

namespace cn::cilium {

struct ServiceFrontend {
  std::string ip;
  std::uint16_t port = 0;
  std::string protocol;  // "tcp", "udp" or "any": the spec's enum is lowercase
  std::string scope;     // "external" or "internal"

  bool operator==(const ServiceFrontend&) const = default;
};

struct ServiceBackend {
  std::string ip;
  std::uint16_t port = 0;
  std::string protocol;  // "TCP": read by 1.17 only, ignored by 1.16's decoder
  std::string state;     // active, terminating, quarantined or maintenance
  std::uint16_t weight = 0;
  std::string node_name;

  bool operator==(const ServiceBackend&) const = default;
};

struct ServiceSpec {
  std::int64_t id = 0;
  ServiceFrontend frontend;
  std::vector<ServiceBackend> backends;
  // `flags`: always sent, since the 1.16/1.17 handlers read flags.type before any nil check.
  std::string type;  // ClusterIP, NodePort, ...
  std::string name;
  std::string nomad_namespace;  // the spec's `namespace`
  std::string ext_traffic_policy;
  std::string int_traffic_policy;

  bool operator==(const ServiceSpec&) const = default;
};

// Body of GET /v1/service: an array of Service objects, of which `spec` is read. A service
// whose spec cannot be read fails the whole list: the caller reconciles against it, and a
// service it could not see might be one it owns.
[[nodiscard]] Result<std::vector<ServiceSpec>> parse_service_list(std::string_view body);

// The body of PUT /v1/service/{id}.
std::string service_spec_json(const ServiceSpec& spec);

}  // namespace cn::cilium
