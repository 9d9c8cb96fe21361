#pragma once
// Which Nomad meta keys may become identity labels. Meta is free-form (deploy times, commit
// hashes, pipeline IDs), and every distinct label set costs a cluster-wide identity, so nothing
// is labelled unless the operator names it (`--meta-labels team,tier`).
#include <string>
#include <string_view>
#include <vector>

#include "common/util/result.h"

namespace cn::labels {

// Prefix of our own label keys; meta keys may not use it, or a job could forge its identity.
inline constexpr std::string_view kReservedKeyPrefix = "nomad.";

struct LabelPolicy {
  std::vector<std::string> meta_keys;  // sorted, unique, each a valid label key
  // --k8s-compat-labels: also write the two `k8s:` labels that Cilium injects into the peer
  // selectors of every policy loaded from its policy directory (docs/policies.md). Without them
  // an endpoint is never matched as a peer. Each is per namespace or per cluster, so they add no
  // identities.
  bool k8s_compat = true;
  // The agent's cluster name (--cluster-name, or what the agent reports).
  std::string cluster_name = "default";

  friend bool operator==(const LabelPolicy&, const LabelPolicy&) = default;
};

// Why a meta key cannot be a label key, or empty when it can.
std::string meta_key_problem(std::string_view key);

// `k1, k2,k1` -> {k1, k2}. Items are trimmed of spaces and tabs, empties skipped, duplicates
// merged. Fails (naming the item) on a `nomad.*` key or one that is not a valid label key.
[[nodiscard]] Result<LabelPolicy> parse_label_policy(std::string_view text);

}  // namespace cn::labels
