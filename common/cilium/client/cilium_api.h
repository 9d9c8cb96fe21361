#pragma once
// What the labeler asks of the local Cilium agent (REST over its Unix socket). A pure interface:
// the curl implementation lives beside it; tests use doubles or the fake agent.
//
// Errors: the kind says what happened (not_found: no such endpoint; http with status 400: an ID
// form this agent does not parse; rate_limited: the client's own waits ran out; permission:
// the API is disabled on this agent; transport/timeout/cancelled: no answer). Messages carry the
// agent's JSON-string error text. Every call ends by the deadline, or sooner on its stop.
#include <map>
#include <string>
#include <vector>

#include "common/cilium/model/agent_addressing.h"
#include "common/cilium/model/agent_options.h"
#include "common/cilium/model/endpoint.h"
#include "common/cilium/model/endpoint_ref.h"
#include "common/util/clock.h"
#include "common/util/result.h"

namespace cn::cilium {

class CiliumApi {
 public:
  virtual ~CiliumApi() = default;

  // GET /v1/config answers 200: the agent is up and serving its API.
  [[nodiscard]] virtual Status ready(Deadline deadline) = 0;

  // The agent's --cluster-name, from GET /v1/healthz `cluster.self` (model/agent_cluster.h).
  // bad_answer when the answer does not tell it (no `cluster.self` yet).
  [[nodiscard]] virtual Result<std::string> cluster_name(Deadline deadline) = 0;

  // The policy-relevant options GET /v1/config reports (model/agent_options.h); an option the
  // answer leaves out is not reported. bad_answer when the body is not a DaemonConfiguration.
  // Not pure: a double that does not model the agent's options reports none.
  // By value like every call of this interface, which the overrides follow.
  // NOLINTNEXTLINE(performance-unnecessary-value-param)
  [[nodiscard]] virtual Result<ReportedAgentOptions> agent_options(Deadline /*deadline*/) {
    return ReportedAgentOptions{};
  }

  // The pod CIDRs GET /v1/config reports (model/agent_addressing.h). Not pure, as above: a
  // double that does not model them reports none.
  // NOLINTNEXTLINE(performance-unnecessary-value-param)
  [[nodiscard]] virtual Result<std::vector<IpPrefix>> alloc_ranges(Deadline /*deadline*/) {
    return std::vector<IpPrefix>{};
  }

  [[nodiscard]] virtual Result<Endpoint> endpoint(const EndpointRef& ref, Deadline deadline) = 0;
  [[nodiscard]] virtual Result<EndpointList> endpoints(Deadline deadline) = 0;

  // PATCH /v1/endpoint/{id} {"state":"waiting-for-identity","labels":[...]}: replaces the
  // orchestration identity labels in one step, dropping reserved:init with a single identity
  // change and no grace period (marked deprecated
  // in cilium/cilium api/v1/openapi.yaml, still served).
  [[nodiscard]] virtual Status replace_identity_labels(const EndpointRef& ref,
                                                       const std::vector<std::string>& labels,
                                                       Deadline deadline) = 0;

  // PATCH /v1/endpoint/{id}/labels {"user":[...]}: the complete desired Custom set, diffed by the
  // agent. Used when the deprecated PATCH above is gone from the agent.
  [[nodiscard]] virtual Status set_user_labels(const EndpointRef& ref,
                                               const std::vector<std::string>& labels,
                                               Deadline deadline) = 0;

  [[nodiscard]] virtual Status delete_endpoint(const EndpointRef& ref, Deadline deadline) = 0;

  // PATCH /v1/endpoint/{id}/config {"options":{NAME: VALUE}}: the agent validates each name
  // against the endpoint's mutable options and each value as a boolean ("Enabled"/"Disabled"),
  // then regenerates the endpoint (cilium/cilium daemon/cmd/endpoint.go,
  // patchEndpointIDConfig). 400 (invalid) names what it refused.
  // Not pure: a double that does not model options refuses the call.
  [[nodiscard]] virtual Status set_endpoint_options(
      const EndpointRef& /*ref*/, const std::map<std::string, std::string>& /*options*/,
      Deadline /*deadline*/) {  // NOLINT(performance-unnecessary-value-param)
    return fail(ErrorKind::invalid, "endpoint options are not supported by this client");
  }
};

}  // namespace cn::cilium
