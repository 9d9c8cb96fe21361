#pragma once
// The part of a Cilium agent Endpoint (GET /v1/endpoint[/{id}]) the labeler reads.
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/labels/label_set.h"
#include "common/util/json_fields.h"
#include "common/util/json_where.h"
#include "common/util/result.h"

namespace cn::cilium {

// Fixed numeric identities of single reserved labels (cc pkg/identity/numericidentity.go).
inline constexpr std::int64_t kIdentityHost = 1;
inline constexpr std::int64_t kIdentityHealth = 4;
inline constexpr std::int64_t kIdentityInit = 5;

struct Addressing {
  std::string ipv4;
  std::string ipv6;
};

struct Endpoint {
  std::int64_t id = 0;
  std::string state;                                  // status.state
  std::int64_t identity_id = 0;                       // status.identity.id; 0 = none reported
  std::vector<std::string> identity_labels;           // status.identity.labels
  std::vector<std::string> realized_user_labels;      // status.labels.realized.user (Custom)
  std::vector<std::string> security_relevant_labels;  // status.labels.security-relevant
  std::vector<std::string> derived_labels;            // status.labels.derived
  std::vector<std::string> disabled_labels;           // status.labels.disabled
  std::vector<std::string> spec_user_labels;          // spec.label-configuration.user
  std::string cni_attachment_id;                      // "<containerID>:<ifname>", no prefix
  std::string container_id;                           // empty on newer agents/flags
  std::vector<Addressing> addressing;                 // status.networking.addressing
  std::string health;                                 // status.health.overallHealth
  std::int64_t realized_policy_revision = 0;          // status.policy.realized.policy-revision
  // spec.options.PolicyAuditMode ("Enabled"/"Disabled", the agent's option.FormatOption);
  // empty when the answer does not carry it.
  std::string policy_audit_mode;
  std::string realized_policy_enabled;  // status.policy.realized.policy-enabled, e.g. audit-both
};

// The endpoint option that puts one endpoint's policy verdicts in audit (cilium/cilium
// pkg/option/endpoint.go, PolicyAuditMode); the values the agent prints for it.
inline constexpr std::string_view kOptionPolicyAuditMode = "PolicyAuditMode";
inline constexpr std::string_view kOptionEnabled = "Enabled";
inline constexpr std::string_view kOptionDisabled = "Disabled";

// Whether the endpoint reports PolicyAuditMode Enabled; nullopt when it does not report it.
std::optional<bool> policy_audit_enabled(const Endpoint& ep);

// The members parse_endpoint() reads: keep it in step with endpoint.cpp.
const json::Fields& endpoint_fields();

// Only wrong types fail; every missing or null field is its zero value. Endpoints of other
// orchestrators parse fine and are told apart by attachment_of().
[[nodiscard]] Result<Endpoint> parse_endpoint(const nlohmann::json& value,
                                              const json::JsonWhere& where = "Endpoint");
// Body of GET /v1/endpoint/{id}.
[[nodiscard]] Result<Endpoint> parse_endpoint_text(std::string_view body);

struct EndpointList {
  std::vector<Endpoint> endpoints;
  std::vector<Error> rejected;  // elements that failed, so one cannot hide the others
};

// Body of GET /v1/endpoint: a JSON array (null and an empty body count as empty, since the
// agent answers a filtered list that matched nothing with 404 and no body).
[[nodiscard]] Result<EndpointList> parse_endpoint_list(std::string_view body);

// Identity still `reserved:init`: numeric identity 5, or reserved:init among the identity labels
// (after a first PATCH /labels the identity is init plus ours, with a new number).
bool is_init(const Endpoint& ep);

// An endpoint of the agent itself, which the labeler must never touch: identity host (1) or
// health (4), or identity labels that are all `reserved:` and not init. An init endpoint is NOT
// reserved-only: it is exactly what we label. Endpoints with no reported identity are not
// reserved-only either; attachment_of() decides whether they are ours.
bool is_reserved_only(const Endpoint& ep);

labels::LabelSet user_labels(const Endpoint& ep);      // realized Custom labels
labels::LabelSet identity_labels(const Endpoint& ep);  // what the identity is made of

// The Nomad allocation behind an endpoint.
struct Attachment {
  std::string alloc_id;
  std::string ifname;  // empty when only container-id was available

  friend bool operator==(const Attachment&, const Attachment&) = default;
};

// `<alloc>:<ifname>` with a valid allocation ID and a non-empty interface name.
std::optional<Attachment> parse_attachment_id(std::string_view cni_attachment_id);

// From cni-attachment-id, falling back to container-id for agents older than 1.15 that lack the
// attachment ID. nullopt when neither holds an allocation ID (host, health, docker endpoints).
std::optional<Attachment> attachment_of(const Endpoint& ep);

}  // namespace cn::cilium
