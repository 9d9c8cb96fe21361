#pragma once
// CiliumApi over the agent's Unix socket (libcurl through cn::http). Thread-safe; each call
// uses its own pooled connection. Requests carry "Host: localhost" like Cilium's Go client.
#include <memory>

#include <spdlog/fwd.h>

#include "common/cilium/client/cilium_api.h"
#include "common/cilium/client/cilium_client_config.h"
#include "common/cilium/client/cilium_services_api.h"
#include "common/http/http_client.h"
#include "common/http/retry.h"

namespace cn::cilium {

class CurlCiliumClient final : public CiliumApi, public CiliumServicesApi {
 public:
  // `clock` paces retries and turns deadlines into timeouts; it must outlive the client.
  explicit CurlCiliumClient(CiliumClientConfig config, Clock& clock = system_clock(),
                            std::shared_ptr<spdlog::logger> log = nullptr);

  [[nodiscard]] Status ready(Deadline deadline) override;
  [[nodiscard]] Result<std::string> cluster_name(Deadline deadline) override;
  [[nodiscard]] Result<ReportedAgentOptions> agent_options(Deadline deadline) override;
  [[nodiscard]] Result<std::vector<IpPrefix>> alloc_ranges(Deadline deadline) override;
  [[nodiscard]] Result<Endpoint> endpoint(const EndpointRef& ref, Deadline deadline) override;
  [[nodiscard]] Result<EndpointList> endpoints(Deadline deadline) override;
  [[nodiscard]] Status replace_identity_labels(const EndpointRef& ref,
                                               const std::vector<std::string>& labels,
                                               Deadline deadline) override;
  [[nodiscard]] Status set_user_labels(const EndpointRef& ref,
                                       const std::vector<std::string>& labels,
                                       Deadline deadline) override;
  [[nodiscard]] Status delete_endpoint(const EndpointRef& ref, Deadline deadline) override;
  [[nodiscard]] Status set_endpoint_options(const EndpointRef& ref,
                                            const std::map<std::string, std::string>& options,
                                            Deadline deadline) override;

  // CiliumServicesApi (curl_cilium_services.cpp).
  [[nodiscard]] Result<std::optional<AgentVersion>> agent_version(Deadline deadline) override;
  [[nodiscard]] Result<bool> service_id_route_exists(Deadline deadline) override;
  [[nodiscard]] Result<std::vector<ServiceSpec>> services(Deadline deadline) override;
  [[nodiscard]] Status put_service(const ServiceSpec& spec, Deadline deadline) override;
  [[nodiscard]] Status delete_service(std::int64_t id, Deadline deadline) override;

  const CiliumClientConfig& config() const { return config_; }

 private:
  // With retries (429 until the deadline). Any status is returned; no answer is an Error.
  [[nodiscard]] Result<http::Response> call(http::Request request, Deadline deadline, bool retry);
  // A non-2xx answer as an Error; `endpoint_op`: an empty 404 means "endpoint not found".
  static Error error_from(const http::Response& response, bool endpoint_op);

  CiliumClientConfig config_;
  Clock& clock_;
  std::shared_ptr<spdlog::logger> log_;
  http::HttpClient http_;
  BackoffJitter retry_jitter_;  // the in-call retries', shared by the worker threads
};

}  // namespace cn::cilium
