#pragma once
// Small builders for the load-balancer model in tests.
#include <string>
#include <vector>

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

}  // namespace cn::labeler::testing
