#pragma once
// One endpoint inside the fake agent, with Cilium's four label buckets (OpLabels) and the label
// operations whose quirks the labeler must survive (fact sheet section 4).
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/util/clock.h"
#include "common/util/result.h"
#include "tests/fakes/cilium/cilium_labels.h"
#include "tests/fakes/cilium/identity_allocator.h"

namespace cn::fakes::cilium {

// API mapping: custom = status.labels.realized.user and spec.label-configuration.user;
// orchestration_identity = security-relevant; orchestration_info = derived; disabled = disabled.
struct OpLabels {
  LabelMap custom;
  LabelMap orchestration_identity;
  LabelMap orchestration_info;
  LabelMap disabled;

  LabelMap identity_labels() const { return merge_labels(custom, orchestration_identity); }
  bool is_init() const;
  // SplitUserLabelChanges: keyed by KEY only, so a changed value is neither added nor deleted.
  std::pair<LabelMap, LabelMap> split_user_label_changes(const LabelMap& desired) const;
  // OpLabels.ModifyIdentityLabels; error "label X not found" (X = key) when a delete misses.
  Result<bool> modify_identity_labels(const LabelMap& add, const LabelMap& del);
  // OpLabels.ReplaceIdentityLabels: a disabled key stays disabled; returns whether changed.
  bool replace_identity_labels(const LabelMap& labels);
  bool replace_information_labels(const LabelMap& labels);
  // True when any endpoint label equals (label_matches) every wanted label.
  bool has_all(const std::vector<Label>& wanted) const;
};

struct StatusLogEntry {
  std::string code;  // ok | failed
  std::string message;
  std::string state;
  WallTime when;
};

struct FakeEndpoint {
  std::uint16_t id = 0;
  std::string container_id;
  std::string container_name;
  std::string container_interface_name;
  std::string interface_name;
  std::int64_t interface_index = 0;
  std::string mac;
  std::string host_mac;
  std::string ipv4;
  std::string ipv4_pool;
  std::string ipv4_expiration_uuid;
  std::string ipv6;
  std::string ipv6_pool;
  std::string ipv6_expiration_uuid;
  std::string k8s_pod_name;
  std::string k8s_namespace;
  std::string k8s_uid;
  std::string netns_cookie;
  std::string docker_endpoint_id;
  std::string docker_network_id;
  bool disable_legacy_identifiers = false;
  bool policy_enabled = false;
  // Mutable options by name ("PolicyAuditMode" -> "Enabled"); set at creation from the agent's
  // defaults, changed by PATCH /v1/endpoint/{id}/config (endpoint_options.h).
  std::map<std::string, std::string> options;
  // The realized enforcement ("none", "ingress", "egress", "both"): the fake does not derive it
  // from its rules; a test sets it to see GET /v1/endpoint's audit-* forms.
  std::string policy_enforcement = "none";

  OpLabels labels;
  std::optional<Identity> identity;
  std::string state = "waiting-for-identity";
  std::string health = "OK";  // overall health; tests can force Failure (cilium-cni CHECK 101)
  std::uint64_t identity_revision = 0;  // bumps on every label change; stale resolutions abort
  std::uint64_t regenerations = 0;
  std::vector<StatusLogEntry> log;
  std::string controller_uuid;
  WallTime created;
  WallTime last_identity_resolution;

  // "<container-id>:<ifname>", or empty when there is no container ID.
  std::string cni_attachment_id() const;
  bool reserved_endpoint() const;  // host or health: the API may not modify it
};

}  // namespace cn::fakes::cilium
