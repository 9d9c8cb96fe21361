#pragma once
// Small builders for the load-balancer model in tests.
#include <string>
#include <vector>

#include "common/nomad/model/service_registration.h"
#include "labeler/services/lb_service.h"

namespace cn::labeler::testing {

inline IpPrefix ip(const char* text) {
  return *parse_ip_address(text);
}

inline LbBackend backend(std::string alloc_id, const char* address, std::uint32_t port,
                         BackendState state = BackendState::ready, std::string label = "http") {
  LbBackend b;
  b.alloc_id = std::move(alloc_id);
  b.address = ip(address);
  b.ports = {{std::move(label), port, LbProtocol::tcp}};
  b.state = state;
  return b;
}

inline LbService service(std::string ns, std::string name, const char* vip, std::uint32_t port,
                         std::vector<LbBackend> backends = {}) {
  LbService s;
  s.nomad_namespace = std::move(ns);
  s.name = std::move(name);
  s.vip = ip(vip);
  s.ports = {{"http", port, LbProtocol::tcp}};
  s.backends = std::move(backends);
  return s;
}

// A registration as Nomad's client writes it for a group service (client/serviceregistration/
// id.go in hashicorp/nomad).
inline nomad::ServiceRegistration registration(const char* alloc, const char* address,
                                               std::int64_t port, const char* name = "web",
                                               const char* label = "http",
                                               std::uint64_t modify_index = 1) {
  nomad::ServiceRegistration r;
  r.alloc_id = alloc;
  r.service_name = name;
  r.nomad_namespace = "default";
  r.id = std::string("_nomad-task-") + alloc + "-group-app-" + name + "-" + label;
  r.address = address;
  r.port = port;
  r.create_index = modify_index;
  r.modify_index = modify_index;
  return r;
}

}  // namespace cn::labeler::testing
