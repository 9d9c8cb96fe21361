// CurlCiliumClient's CiliumServicesApi: the agent's release and the REST services of 1.16/1.17.
#include <nlohmann/json.hpp>

#include "common/cilium/client/agent_error.h"
#include "common/cilium/client/curl_cilium_client.h"

namespace cn::cilium {

namespace {

constexpr int kOk = 200;
constexpr int kNotFound = 404;

std::string service_path(std::int64_t id) {
  return "/v1/service/" + std::to_string(id);
}

bool succeeded(int status) {
  return status >= 200 && status < 300;
}

}  // namespace

Result<std::optional<AgentVersion>> CurlCiliumClient::agent_version(Deadline deadline) {
  // Brief: the agent still fills in the `cilium` status, and leaves out the rest.
  http::Request req{
      http::Method::get, "/v1/healthz", {}, std::nullopt, std::chrono::milliseconds{0}};
  req.headers.set("brief", "true");
  auto res = call(std::move(req), std::move(deadline), true);
  if (!res) return std::unexpected(res.error());
  if (res->status != kOk) return std::unexpected(error_from(*res, false));
  return http::refused_answer(parse_healthz_version(res->body));
}

Result<bool> CurlCiliumClient::service_id_route_exists(Deadline deadline) {
  auto res = call(
      http::Request{
          http::Method::get, service_path(0), {}, std::nullopt, std::chrono::milliseconds{0}},
      std::move(deadline), true);
  if (!res) return std::unexpected(res.error());
  if (res->status == kOk) return true;
  if (res->status != kNotFound) return std::unexpected(error_from(*res, false));
  // The handler's 404 has no body; the router's is a JSON object.
  auto body = nlohmann::json::parse(res->body, nullptr, false);
  return !(body.is_object() && body.contains("message"));
}

Result<std::vector<ServiceSpec>> CurlCiliumClient::services(Deadline deadline) {
  auto res = call(
      http::Request{
          http::Method::get, "/v1/service", {}, std::nullopt, std::chrono::milliseconds{0}},
      std::move(deadline), true);
  if (!res) return std::unexpected(res.error());
  if (res->status != kOk) return std::unexpected(error_from(*res, false));
  return http::refused_answer(parse_service_list(res->body));
}

Status CurlCiliumClient::put_service(const ServiceSpec& spec, Deadline deadline) {
  auto res = call(http::Request{http::Method::put,
                                service_path(spec.id),
                                {},
                                service_spec_json(spec),
                                std::chrono::milliseconds{0}},
                  std::move(deadline), true);
  if (!res) return std::unexpected(res.error());
  if (!succeeded(res->status)) return std::unexpected(error_from(*res, false));
  return {};
}

Status CurlCiliumClient::delete_service(std::int64_t id, Deadline deadline) {
  auto res = call(
      http::Request{
          http::Method::del, service_path(id), {}, std::nullopt, std::chrono::milliseconds{0}},
      std::move(deadline), true);
  if (!res) return std::unexpected(res.error());
  if (!succeeded(res->status)) return std::unexpected(error_from(*res, false));
  return {};
}

}  // namespace cn::cilium
