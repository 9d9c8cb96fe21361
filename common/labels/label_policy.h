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

  friend bool operator==(const LabelPolicy&, const LabelPolicy&) = default;
};

// Why a meta key cannot be a label key, or empty when it can.
std::string meta_key_problem(std::string_view key);

// `k1, k2,k1` -> {k1, k2}. Items are trimmed of spaces and tabs, empties skipped, duplicates
// merged. Fails (naming the item) on a `nomad.*` key or one that is not a valid label key.
Result<LabelPolicy> parse_label_policy(std::string_view text);

}  // namespace cn::labels
