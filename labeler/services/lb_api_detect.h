#pragma once
// Which way the local agent takes the labeler's services: the state file (1.18 and later) or
// the REST API (1.16, 1.17), decided from the running agent rather than a flag an operator
// could get wrong. The agent reports its release in GET /v1/healthz (model/agent_version.h);
// while it has not collected its status yet the text has no release, and the route that 1.18
// removed decides instead.
#include <optional>

#include "common/cilium/client/cilium_services_api.h"
#include "common/cilium/model/agent_version.h"
#include "labeler/services/lb_writer.h"

namespace cn::labeler {

struct LbApiDetection {
  LbApi api = LbApi::state_file;
  std::optional<cilium::AgentVersion> version;  // nullopt: decided by the route alone
  // For LbCheckOptions::shared_backends_safe: agents before 1.19.5 keep a removed backend that
  // two services share (cilium/cilium#46493). False whenever the release is unknown.
  bool shared_backends_safe = false;
};

// Fails only when the agent does not answer (or answers something that is no agent's).
[[nodiscard]] Result<LbApiDetection> detect_lb_api(cilium::CiliumServicesApi& agent,
                                                   const Deadline& deadline);

// The rule on a known release: REST before 1.18, the state file from it.
LbApiDetection lb_api_for(const cilium::AgentVersion& version);

}  // namespace cn::labeler
