#pragma once
// The small grammars a Cilium policy is made of: DNS names, label keys as a selector writes them,
// ports (CIDRs: common/util/ip_prefix.h). Each predicate follows the upstream check named beside
// it (docs/policies.md).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace cn::policy {

// k8s.io/apimachinery IsDNS1123Subdomain: 1..253 of [a-z0-9.-], each dot-separated part
// alphanumeric at both ends. The agent's directory watcher applies it to file names.
bool is_dns1123_subdomain(std::string_view text);

// Nomad's namespace name rule (nomad/structs: validNamespaceName).
bool is_nomad_namespace(std::string_view text);

// A selector key as a policy writes it ("nomad:nomad.job", "k8s:app.kubernetes.io/name", "app"):
// the agent turns "<source>:<key>" into "<source>.<key>" ("any." without a source, "reserved."
// for "$key") and then applies Kubernetes' qualified-name rule. nullopt when valid, else why.
std::optional<std::string> selector_key_problem(std::string_view key);

// Kubernetes label-value rule as selectors apply it. nullopt when valid, else why.
std::optional<std::string> label_value_problem(std::string_view value);

// pkg/iana IsSvcName: a named port, 1..15 chars, at least one letter, no "--".
bool is_port_name(std::string_view text);
// A decimal port 0..65535 without leading zeros. The agent parses ports with Go's base-0 rules,
// where "080" is octal 64: we refuse leading zeros rather than guess which was meant.
std::optional<std::uint32_t> parse_port_number(std::string_view text);

}  // namespace cn::policy
