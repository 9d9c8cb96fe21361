#include "bench/support/netreap_policy_sync.h"

#include <nlohmann/json.hpp>

namespace cn::bench {

namespace {

double elapsed_ms(std::chrono::steady_clock::time_point a,
                  std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

}  // namespace

Result<NetreapPolicySync> netreap_policy_sync(const fakes::HttpTarget& agent,
                                              const std::string& rules_text) {
  NetreapPolicySync out;
  const auto start = std::chrono::steady_clock::now();
  auto call = [&](std::string_view method, std::string_view body) -> Status {
    ++out.agent_calls;
    auto r = fakes::http_request(agent, method, "/v1/policy", body);
    if (!r) return std::unexpected(r.error());
    if (r->status != 200)
      return fail(std::string(method) + " /v1/policy answered " + std::to_string(r->status) + ": " +
                  r->body);
    return {};
  };
  if (auto st = call("GET", ""); !st) return std::unexpected(st.error());
  if (auto st = call("DELETE", ""); !st) return std::unexpected(st.error());
  const auto deleted = std::chrono::steady_clock::now();
  // go-swagger sends the `policy` string parameter JSON-encoded.
  if (auto st = call("PUT", nlohmann::json(rules_text).dump()); !st)
    return std::unexpected(st.error());
  const auto put = std::chrono::steady_clock::now();
  out.total_ms = elapsed_ms(start, put);
  out.without_policy_ms = elapsed_ms(deleted, put);
  return out;
}

}  // namespace cn::bench
