#include "common/cilium/client/curl_cilium_client.h"

#include <algorithm>

#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include "common/cilium/client/agent_error.h"
#include "common/cilium/model/agent_cluster.h"

namespace cn::cilium {

namespace {

using std::chrono::milliseconds;

http::HttpClientConfig http_config(const CiliumClientConfig& c,
                                   const std::shared_ptr<spdlog::logger>& log, Clock& clock) {
  http::HttpClientConfig h;
  h.clock = &clock;
  h.target = http::HttpTarget::unix_socket(c.socket_path, "localhost");
  h.connect_timeout = c.connect_timeout;
  h.default_timeout = c.request_timeout;
  h.user_agent = "cilium-nomad-labeler/" CN_VERSION;
  h.log = log;
  return h;
}

std::string endpoint_path(const EndpointRef& ref) {
  return "/v1/endpoint/" + ref.to_path_segment();
}

bool success(int status) {
  return status >= 200 && status < 300;
}

}  // namespace

CurlCiliumClient::CurlCiliumClient(CiliumClientConfig config, Clock& clock,
                                   std::shared_ptr<spdlog::logger> log)
    : config_(std::move(config)),
      clock_(clock),
      log_(log ? std::move(log) : spdlog::default_logger()),
      http_(http_config(config_, log_, clock_)),
      retry_jitter_(BackoffJitter::seed_or_random(config_.retry_seed)) {}

Error CurlCiliumClient::error_from(const http::Response& response, bool endpoint_op) {
  std::string text = agent_error_text(response.body);
  if (text.empty()) {
    text = (endpoint_op && response.status == 404) ? "endpoint not found"
                                                   : "HTTP " + std::to_string(response.status);
  }
  return http_error(response.status, std::move(text));
}

Result<http::Response> CurlCiliumClient::call(http::Request request, Deadline deadline,
                                              bool retry) {
  const std::string what = std::string(http::to_string(request.method)) + " " + request.target;
  auto attempt = [&](milliseconds left) {
    request.timeout = std::min(left, config_.request_timeout);
    return http_.send(request, deadline.stop);
  };
  http::HttpResult<http::Response> res;
  if (retry) {
    auto hint = [](const http::Response& r) -> std::optional<milliseconds> {
      if (r.status != 429) return std::nullopt;
      return rate_limit_wait_hint(agent_error_text(r.body));
    };
    res = http::with_retry(http::RetryRun{config_.retry, retry_jitter_, clock_, deadline.at,
                                          deadline.stop, hint, log_.get(), what.c_str()},
                           attempt);
  } else {
    auto left = std::chrono::duration_cast<milliseconds>(deadline.at - clock_.now());
    if (left.count() <= 0) return fail(ErrorKind::timeout, what + ": deadline exceeded");
    res = attempt(left);
  }
  if (!res) return std::unexpected(res.error());
  if (!success(res->status)) {
    log_->debug("cilium error request=\"{}\" status={}", what, res->status);
  }
  return std::move(*res);
}

Status CurlCiliumClient::ready(Deadline deadline) {
  // A probe: one try, the caller polls.
  auto res = call(http::Request{http::Method::get, "/v1/config", {}, std::nullopt, milliseconds{0}},
                  deadline, false);
  if (!res) return std::unexpected(res.error());
  if (res->status != 200) return std::unexpected(error_from(*res, false));
  return {};
}

Result<std::string> CurlCiliumClient::cluster_name(Deadline deadline) {
  // Not `brief`: the brief answer leaves `cluster` out.
  auto res =
      call(http::Request{http::Method::get, "/v1/healthz", {}, std::nullopt, milliseconds{0}},
           deadline, true);
  if (!res) return std::unexpected(res.error());
  if (res->status != 200) return std::unexpected(error_from(*res, false));
  return http::refused_answer(parse_cluster_name(res->body));
}

Result<ReportedAgentOptions> CurlCiliumClient::agent_options(Deadline deadline) {
  auto res = call(http::Request{http::Method::get, "/v1/config", {}, std::nullopt, milliseconds{0}},
                  deadline, true);
  if (!res) return std::unexpected(res.error());
  if (res->status != 200) return std::unexpected(error_from(*res, false));
  return http::refused_answer(parse_agent_options(res->body));
}

Result<std::vector<IpPrefix>> CurlCiliumClient::alloc_ranges(Deadline deadline) {
  auto res = call(http::Request{http::Method::get, "/v1/config", {}, std::nullopt, milliseconds{0}},
                  deadline, true);
  if (!res) return std::unexpected(res.error());
  if (res->status != 200) return std::unexpected(error_from(*res, false));
  return http::refused_answer(parse_agent_alloc_ranges(res->body));
}

Result<Endpoint> CurlCiliumClient::endpoint(const EndpointRef& ref, Deadline deadline) {
  auto res =
      call(http::Request{http::Method::get, endpoint_path(ref), {}, std::nullopt, milliseconds{0}},
           deadline, true);
  if (!res) return std::unexpected(res.error());
  if (res->status != 200) return std::unexpected(error_from(*res, true));
  return http::refused_answer(parse_endpoint_text(res->body));
}

Result<EndpointList> CurlCiliumClient::endpoints(Deadline deadline) {
  // No body: a GET body would be a label filter, and an unmatched filter answers 404.
  auto res =
      call(http::Request{http::Method::get, "/v1/endpoint", {}, std::nullopt, milliseconds{0}},
           deadline, true);
  if (!res) return std::unexpected(res.error());
  if (res->status != 200) return std::unexpected(error_from(*res, false));
  return http::refused_answer(parse_endpoint_list(res->body));
}

Status CurlCiliumClient::replace_identity_labels(const EndpointRef& ref,
                                                 const std::vector<std::string>& labels,
                                                 Deadline deadline) {
  // `state` is required by the spec (422 without it); `labels` must always be present: an
  // absent key would wipe the orchestration labels (the agent replaces them with what is sent).
  nlohmann::json body = {{"state", "waiting-for-identity"}, {"labels", nlohmann::json::array()}};
  for (const auto& l : labels) body["labels"].push_back(l);
  auto res =
      call(http::Request{http::Method::patch, endpoint_path(ref), {}, body.dump(), milliseconds{0}},
           deadline, true);
  if (!res) return std::unexpected(res.error());
  if (!success(res->status)) return std::unexpected(error_from(*res, true));
  return {};
}

Status CurlCiliumClient::set_user_labels(const EndpointRef& ref,
                                         const std::vector<std::string>& labels,
                                         Deadline deadline) {
  // The complete desired set, also when empty: the agent diffs it against the current one.
  nlohmann::json body = {{"user", nlohmann::json::array()}};
  for (const auto& l : labels) body["user"].push_back(l);
  auto res = call(
      http::Request{
          http::Method::patch, endpoint_path(ref) + "/labels", {}, body.dump(), milliseconds{0}},
      deadline, true);
  if (!res) return std::unexpected(res.error());
  if (!success(res->status)) return std::unexpected(error_from(*res, true));
  return {};
}

Status CurlCiliumClient::set_endpoint_options(const EndpointRef& ref,
                                              const std::map<std::string, std::string>& options,
                                              Deadline deadline) {
  nlohmann::json body = {{"options", nlohmann::json::object()}};
  for (const auto& [name, value] : options) body["options"][name] = value;
  auto res = call(
      http::Request{
          http::Method::patch, endpoint_path(ref) + "/config", {}, body.dump(), milliseconds{0}},
      deadline, true);
  if (!res) return std::unexpected(res.error());
  if (!success(res->status)) return std::unexpected(error_from(*res, true));
  return {};
}

Status CurlCiliumClient::delete_endpoint(const EndpointRef& ref, Deadline deadline) {
  auto res =
      call(http::Request{http::Method::del, endpoint_path(ref), {}, std::nullopt, milliseconds{0}},
           deadline, true);
  if (!res) return std::unexpected(res.error());
  if (!success(res->status)) return std::unexpected(error_from(*res, true));
  if (res->status == 206) {
    // Deleted, but the agent hit errors cleaning up (body: their count). Nothing for us to redo.
    log_->warn("cilium endpoint deleted with errors endpoint={} errors={}", ref.to_string(),
               res->body);
  }
  return {};
}

}  // namespace cn::cilium
