#pragma once
// What the labeler asks of the local Cilium agent (REST over its Unix socket). A pure interface:
// the curl implementation lives beside it; tests use doubles or the fake agent.
//
// Errors: Error::code is the HTTP status when the agent answered (404 with an empty body = no
// such endpoint, 400 bad ID, 429 rate limited after the client's own retries ran out, 500),
// 0 for transport failures. Messages carry the agent's JSON-string error text.
#include <string>
#include <vector>

#include "common/cilium/model/endpoint.h"
#include "common/cilium/model/endpoint_ref.h"
#include "common/util/clock.h"
#include "common/util/result.h"

namespace cn::cilium {

class CiliumApi {
 public:
  virtual ~CiliumApi() = default;

  // GET /v1/config answers 200: the agent is up and serving its API.
  virtual Status ready(MonoTime deadline) = 0;

  virtual Result<Endpoint> endpoint(const EndpointRef& ref, MonoTime deadline) = 0;
  virtual Result<EndpointList> endpoints(MonoTime deadline) = 0;

  // PATCH /v1/endpoint/{id} {"state":"waiting-for-identity","labels":[...]}: replaces the
  // orchestration identity labels in one step, dropping reserved:init with a single identity
  // change and no grace period (cilium-agent-api.md 4.3, 4.4).
  virtual Status replace_identity_labels(const EndpointRef& ref, const std::vector<std::string>& labels,
                                         MonoTime deadline) = 0;

  // PATCH /v1/endpoint/{id}/labels {"user":[...]}: the complete desired Custom set, diffed by the
  // agent (4.2). Used when the deprecated PATCH above is gone from the agent.
  virtual Status set_user_labels(const EndpointRef& ref, const std::vector<std::string>& labels,
                                 MonoTime deadline) = 0;

  virtual Status delete_endpoint(const EndpointRef& ref, MonoTime deadline) = 0;
};

}  // namespace cn::cilium
