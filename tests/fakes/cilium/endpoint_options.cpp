#include "tests/fakes/cilium/endpoint_options.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <string_view>

#include <nlohmann/json.hpp>

namespace cn::fakes::cilium {
namespace {

struct EndpointOptionSpec {
  std::string_view name;
  std::string_view initial;
  bool level = false;  // MonitorAggregationLevel: a level, not a boolean
};

// The mutable library's members with the values a default agent gives a new endpoint.
constexpr std::array<EndpointOptionSpec, 12> kEndpointOptionSpecs = {{
    {"Conntrack", "Enabled"},
    {"ConntrackAccounting", "Enabled"},
    {"ConntrackLocal", "Disabled"},
    {"Debug", "Disabled"},
    {"DebugLB", "Disabled"},
    {"DebugPolicy", "Disabled"},
    {"DropNotification", "Enabled"},
    {"MonitorAggregationLevel", "Medium", true},
    {"PolicyAuditMode", "Disabled"},
    {"PolicyVerdictNotification", "Enabled"},
    {"SourceIPVerification", "Enabled"},
    {"TraceNotification", "Enabled"},
}};

std::string lowercase_option_text(std::string_view text) {
  std::string out(text);
  std::ranges::transform(out, out.begin(),
                         [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// NormalizeBool's words; nullopt for anything else.
std::optional<bool> normalize_option_bool(std::string_view value) {
  const std::string v = lowercase_option_text(value);
  if (v == "true" || v == "on" || v == "enable" || v == "enabled" || v == "1") return true;
  if (v == "false" || v == "off" || v == "disable" || v == "disabled" || v == "0") return false;
  return std::nullopt;
}

// pkg/option/monitor.go: the level names, printed capitalised.
std::optional<std::string> normalize_monitor_level(std::string_view value) {
  const std::string v = lowercase_option_text(value);
  for (std::string_view level : {"None", "Low", "Medium", "Maximum"}) {
    if (lowercase_option_text(level) == v) return std::string(level);
  }
  return std::nullopt;
}

}  // namespace

EndpointOptionMap default_endpoint_options(bool policy_audit_mode) {
  EndpointOptionMap out;
  for (const auto& spec : kEndpointOptionSpecs) out[std::string(spec.name)] = spec.initial;
  if (policy_audit_mode) out["PolicyAuditMode"] = "Enabled";
  return out;
}

Result<EndpointOptionMap> validate_endpoint_options(const nlohmann::json& options) {
  EndpointOptionMap out;
  if (options.is_null()) return out;
  if (!options.is_object()) return fail(ErrorKind::invalid, "options: expected an object");
  for (const auto& [name, value] : options.items()) {
    const auto spec = std::ranges::find_if(kEndpointOptionSpecs, [&](const auto& s) {
      return lowercase_option_text(s.name) == lowercase_option_text(name);
    });
    if (spec == kEndpointOptionSpecs.end()) {
      return fail(ErrorKind::invalid, "unknown option \"" + name + "\"");
    }
    if (!value.is_string()) {
      return fail(ErrorKind::invalid, "options." + name + " in body must be of type string");
    }
    const auto& text = value.get_ref<const std::string&>();
    if (spec->level) {
      auto level = normalize_monitor_level(text);
      if (!level) return fail(ErrorKind::invalid, "invalid option value " + text);
      out[std::string(spec->name)] = *level;
      continue;
    }
    auto enabled = normalize_option_bool(text);
    if (!enabled) return fail(ErrorKind::invalid, "invalid option value " + text);
    out[std::string(spec->name)] = *enabled ? "Enabled" : "Disabled";
  }
  return out;
}

}  // namespace cn::fakes::cilium
