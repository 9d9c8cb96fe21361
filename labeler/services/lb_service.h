#pragma once
// What the labeler asks Cilium's load balancer to serve: one Nomad service (namespace, name) as
// one virtual IP with its ports, and the instances behind it. Built from Nomad's registrations,
// checked (lb_service_check.h), then written for the agent (lb_state_document.h).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/util/ip_prefix.h"

namespace cn::labeler {

enum class LbProtocol { tcp, udp, sctp };
// Exactly as the agent compares them ("TCP"): it takes the text verbatim, and a lowercase
// protocol would give frontends that match no backend (pkg/loadbalancer/reflectors/conversions.go
// in cilium/cilium).
std::string_view to_string(LbProtocol protocol);

struct LbPort {
  // The Nomad port label. Frontend and backend ports are matched by it, so a service with
  // several ports sends each frontend port only to the backends' port of the same label.
  std::string name;
  std::uint32_t port = 0;  // 1..65535 once checked; wider so a bad value can be reported
  LbProtocol protocol = LbProtocol::tcp;

  bool operator==(const LbPort&) const = default;
};

// Whether an instance takes new connections. Cilium's states, from its EndpointSlice
// conditions (pkg/k8s/endpoints.go in cilium/cilium): ready -> active; not ready and not
// terminating -> maintenance from 1.18.5, dropped before; both mean no new connections.
enum class BackendState { ready, not_ready };
std::string_view to_string(BackendState state);

struct LbBackend {
  std::string alloc_id;
  std::string node_name;  // the Cilium node that runs it; empty if unknown
  IpPrefix address;       // a full-length address
  std::vector<LbPort> ports;
  BackendState state = BackendState::not_ready;
  // Why the backend is not ready ("check web-alive: failure"), for `services` and logs.
  std::string state_reason;

  bool operator==(const LbBackend&) const = default;
};

struct LbService {
  std::string nomad_namespace;
  std::string name;
  IpPrefix vip;  // a full-length address from the VIP range
  std::vector<LbPort> ports;
  std::vector<LbBackend> backends;

  bool operator==(const LbService&) const = default;
};

}  // namespace cn::labeler
