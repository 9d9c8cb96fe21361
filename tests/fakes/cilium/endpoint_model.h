#pragma once
// JSON the agent emits, shaped like Go encoding/json over the go-swagger models: omitempty
// everywhere except `state`, and `{}` for present-but-empty nested structs.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "common/util/clock.h"
#include "tests/fakes/cilium/fake_endpoint.h"
#include "tests/fakes/cilium/policy_translate.h"

namespace cn::fakes::cilium {

struct ModelContext {
  WallTime now;
  std::uint64_t policy_revision = 1;
};

nlohmann::json endpoint_json(const FakeEndpoint& ep, const ModelContext& ctx);
nlohmann::json label_configuration_json(const FakeEndpoint& ep);
nlohmann::json endpoint_health_json(const FakeEndpoint& ep);
nlohmann::json endpoint_config_status_json(const FakeEndpoint& ep);
nlohmann::json endpoint_log_json(const FakeEndpoint& ep);
nlohmann::json identity_json(const Identity& ident);

struct DaemonView {
  std::string ipv4_router_ip;
  std::string ipv4_alloc_range;
  std::string ipv6_router_ip;
  std::string ipv6_alloc_range;
  std::string cilium_state = "Ok";  // Ok | Warning | Failure | Disabled
  std::string cilium_msg;
  std::string version_text;
  std::vector<std::string> allocated_ipv4;
  std::string cluster_name = "default";
  // status.daemonConfigurationMap's policy options; nullopt: the map is left out.
  std::optional<RuleValidationFlags> options;
  bool policy_audit_mode = false;  // --policy-audit-mode
};
nlohmann::json daemon_config_json(const DaemonView& view);
nlohmann::json healthz_json(const DaemonView& view, bool brief);

// A response body as go-openapi's JSON producer writes it: no HTML escaping, invalid UTF-8
// replaced, and the trailing newline of json.Encoder.
std::string go_json(const nlohmann::json& j);

// Go's RFC 3339 with seconds only ("2026-08-21T12:40:42Z"), as in endpoint status logs.
std::string rfc3339_seconds(WallTime t);

}  // namespace cn::fakes::cilium
