#include "tests/fakes/cilium/agent_routes.h"

#include <algorithm>

#include "tests/fakes/http/http_wire.h"

namespace cn::fakes::cilium {

bool RouteMatch::allows(std::string_view method) const {
  return std::find(methods.begin(), methods.end(), method) != methods.end();
}

RouteMatch match_route(std::string_view raw_path) {
  RouteMatch m;
  if (!raw_path.starts_with("/v1/")) return m;
  std::vector<std::string> segs;
  std::string_view rest = raw_path.substr(4);
  while (true) {
    const std::size_t slash = rest.find('/');
    auto decoded = wire::percent_decode(rest.substr(0, slash), false);
    if (!decoded) return m;
    segs.push_back(std::move(*decoded));
    if (slash == std::string_view::npos) break;
    rest.remove_prefix(slash + 1);
  }
  if (std::any_of(segs.begin(), segs.end(), [](const std::string& s) { return s.empty(); }))
    return m;
  auto set = [&m](std::string route, std::vector<std::string> methods) {
    m.found = true;
    m.route = std::move(route);
    m.methods = std::move(methods);
  };
  if (segs.size() == 1) {
    if (segs[0] == "config")
      set("/config", {"GET", "PATCH"});
    else if (segs[0] == "healthz")
      set("/healthz", {"GET"});
    else if (segs[0] == "endpoint")
      set("/endpoint", {"GET", "DELETE"});
    else if (segs[0] == "identity")
      set("/identity", {"GET"});
    else if (segs[0] == "policy")
      set("/policy", {"GET", "PUT", "DELETE"});
    else if (segs[0] == "service")
      set("/service", {"GET"});
  } else if (segs.size() == 2) {
    m.id = segs[1];
    if (segs[0] == "endpoint")
      set("/endpoint/{id}", {"GET", "PUT", "PATCH", "DELETE"});
    else if (segs[0] == "identity")
      set("/identity/{id}", {"GET"});
    else if (segs[0] == "service")
      set("/service/{id}", {"GET", "PUT", "DELETE"});
  } else if (segs.size() == 3 && segs[0] == "endpoint") {
    m.id = segs[1];
    if (segs[2] == "labels")
      set("/endpoint/{id}/labels", {"GET", "PATCH"});
    else if (segs[2] == "healthz")
      set("/endpoint/{id}/healthz", {"GET"});
    else if (segs[2] == "config")
      set("/endpoint/{id}/config", {"GET", "PATCH"});
    else if (segs[2] == "log")
      set("/endpoint/{id}/log", {"GET"});
  }
  if (!m.found) m.id.clear();
  return m;
}

std::string rate_limit_group(std::string_view method, std::string_view route) {
  if (route == "/endpoint") {
    if (method == "GET") return "endpoint-list";
    if (method == "DELETE") return "endpoint-delete";
    return "";
  }
  if (!route.starts_with("/endpoint/{id}")) return "";
  if (method == "PUT") return "endpoint-create";
  if (method == "DELETE") return "endpoint-delete";
  if (method == "PATCH") return "endpoint-patch";
  if (method == "GET") return "endpoint-get";
  return "";
}

}  // namespace cn::fakes::cilium
