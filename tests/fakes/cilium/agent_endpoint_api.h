#pragma once
// The agent's /v1 handlers, after routing, faults and latency have been applied.
#include <stop_token>

#include "tests/fakes/cilium/agent_routes.h"
#include "tests/fakes/cilium/agent_state.h"
#include "tests/fakes/http/http_server.h"

namespace cn::fakes::cilium {

HttpResponse serve_v1(AgentState& st, const RouteMatch& route, const HttpRequest& req,
                      std::stop_token stop);

// PUT logic shared with FakeCiliumAgent::create_endpoint(); error = {JSON body, status}.
Result<nlohmann::json> create_from_body(AgentState& st, std::string_view body);

HttpResponse json_response(int status, const nlohmann::json& body);
HttpResponse error_string_response(int status, const std::string& message);
HttpResponse empty_response(int status);

}  // namespace cn::fakes::cilium
