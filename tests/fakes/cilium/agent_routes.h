#pragma once
// The agent's /v1 routes as path classes ("/endpoint/{id}/labels"), matched on the RAW path so
// that an ID holding %2F stays one segment, then percent-decoded.
#include <string>
#include <string_view>
#include <vector>

namespace cn::fakes::cilium {

struct RouteMatch {
  bool found = false;                // false: 404 from the router
  std::string route;                 // e.g. "/endpoint/{id}/labels"
  std::string id;                    // decoded {id}, when the route has one
  std::vector<std::string> methods;  // allowed methods (405 + Allow otherwise)
  bool allows(std::string_view method) const;
};

RouteMatch match_route(std::string_view raw_path);
// Rate-limit group of a call (section 6), or "" when the call is not limited.
std::string rate_limit_group(std::string_view method, std::string_view route);

}  // namespace cn::fakes::cilium
