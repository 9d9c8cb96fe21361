#include "labeler/services/lb_api_detect.h"

namespace cn::labeler {

namespace {

// 1.18 added --lb-state-file and removed the REST service writes with the old load-balancer
// control plane (cilium/cilium#39084).
constexpr int kStateFileMinor = 18;
// The release whose flattened backends drop a removed shared backend (cilium/cilium#46493,
// fixed in v1.19.5 by cilium/cilium#46462).
constexpr int kSharedBackendsMinor = 19;
constexpr int kSharedBackendsPatch = 5;

}  // namespace

LbApiDetection lb_api_for(const cilium::AgentVersion& version) {
  LbApiDetection d;
  d.version = version;
  const bool before_state_file =
      version.major < 1 || (version.major == 1 && version.minor < kStateFileMinor);
  d.api = before_state_file ? LbApi::rest : LbApi::state_file;
  d.shared_backends_safe = version.at_least(1, kSharedBackendsMinor, kSharedBackendsPatch);
  return d;
}

Result<LbApiDetection> detect_lb_api(cilium::CiliumServicesApi& agent, const Deadline& deadline) {
  auto version = agent.agent_version(deadline);
  if (!version) return std::unexpected(with_context("Cilium agent: release", version.error()));
  if (*version) return lb_api_for(**version);
  auto route = agent.service_id_route_exists(deadline);
  if (!route) return std::unexpected(with_context("Cilium agent: service route", route.error()));
  LbApiDetection d;
  d.api = *route ? LbApi::rest : LbApi::state_file;
  return d;
}

}  // namespace cn::labeler
