#include "common/cilium/client/agent_error.h"

#include <nlohmann/json.hpp>

#include "common/http/error_text.h"
#include "common/util/go_duration.h"

namespace cn::cilium {

std::string agent_error_text(std::string_view body) {
  auto doc = nlohmann::json::parse(body, nullptr, false);
  if (!doc.is_discarded()) {
    if (doc.is_string()) return http::body_excerpt(doc.get<std::string>());
    if (doc.is_object() && doc.contains("message") && doc["message"].is_string()) {
      return http::body_excerpt(doc["message"].get<std::string>());
    }
  }
  return http::body_excerpt(body);
}

std::optional<std::chrono::milliseconds> rate_limit_wait_hint(std::string_view text) {
  static constexpr std::string_view kMarker = "wait ";
  auto pos = text.find(kMarker);
  if (pos == std::string_view::npos) return std::nullopt;
  std::string_view rest = text.substr(pos + kMarker.size());
  auto end = rest.find(' ');
  return parse_go_duration(rest.substr(0, end));
}

}  // namespace cn::cilium
