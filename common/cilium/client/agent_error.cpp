#include "common/cilium/client/agent_error.h"

#include <cctype>
#include <cmath>

#include <nlohmann/json.hpp>

#include "common/http/error_text.h"

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

std::optional<std::chrono::milliseconds> parse_go_duration(std::string_view text) {
  if (text.empty()) return std::nullopt;
  double total_ms = 0;
  std::size_t i = 0;
  while (i < text.size()) {
    std::size_t start = i;
    while (i < text.size() &&
           (std::isdigit(static_cast<unsigned char>(text[i])) != 0 || text[i] == '.'))
      ++i;
    if (i == start) return std::nullopt;
    double value = 0;
    try {
      value = std::stod(std::string(text.substr(start, i - start)));
    } catch (...) {
      return std::nullopt;
    }
    std::size_t unit_start = i;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])) == 0 &&
           text[i] != '.')
      ++i;
    std::string_view unit = text.substr(unit_start, i - unit_start);
    double scale = 0;
    if (unit == "ns")
      scale = 1e-6;
    else if (unit == "us" || unit == "\xC2\xB5s" || unit == "\xCE\xBCs")
      scale = 1e-3;
    else if (unit == "ms")
      scale = 1;
    else if (unit == "s")
      scale = 1e3;
    else if (unit == "m")
      scale = 60e3;
    else if (unit == "h")
      scale = 3600e3;
    else
      return std::nullopt;
    total_ms += value * scale;
  }
  if (total_ms < 0 || total_ms > 1e12) return std::nullopt;
  return std::chrono::milliseconds{std::llround(total_ms)};
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
