#pragma once
// What the services feature asks of the local Cilium agent, beside CiliumApi: which release it
// is, and the REST load-balancer services of 1.16 and 1.17 (removed in 1.18, whose agent reads
// --lb-state-file instead). An interface of its own so that the label path's doubles need not
// grow. Errors as in cilium_api.h; a refused PUT keeps the agent's status (460 invalid
// frontend, 461 invalid backend, 500) and its error text.
#include <cstdint>
#include <optional>
#include <vector>

#include "common/cilium/model/agent_service.h"
#include "common/cilium/model/agent_version.h"
#include "common/util/clock.h"
#include "common/util/result.h"

namespace cn::cilium {

class CiliumServicesApi {
 public:
  virtual ~CiliumServicesApi() = default;

  // GET /v1/healthz (brief): the release in the `cilium` status; nullopt while the agent has
  // not collected its status yet (model/agent_version.h).
  [[nodiscard]] virtual Result<std::optional<AgentVersion>> agent_version(Deadline deadline) = 0;

  // GET /v1/service/0: whether the agent still routes /v1/service/{id}. 1.16 and 1.17 answer
  // an unknown ID with 404 and no body; from 1.18 the route is gone and go-openapi's router
  // answers 404 with {"code":404,"message":"path ... was not found"}.
  [[nodiscard]] virtual Result<bool> service_id_route_exists(Deadline deadline) = 0;

  // GET /v1/service: every service the agent holds, whoever wrote it.
  [[nodiscard]] virtual Result<std::vector<ServiceSpec>> services(Deadline deadline) = 0;

  // PUT /v1/service/{id} with the spec's id in both the path and the body (the handler reads
  // only the body's).
  [[nodiscard]] virtual Status put_service(const ServiceSpec& spec, Deadline deadline) = 0;

  // DELETE /v1/service/{id}: not_found when the agent has no such service.
  [[nodiscard]] virtual Status delete_service(std::int64_t id, Deadline deadline) = 0;
};

}  // namespace cn::cilium
