#pragma once
// Kubernetes label-name and label-value rules, which Cilium policies use to select labels.
// A label that breaks them is stored by the agent but can never be matched by a policy, and a
// ':' or '=' in a key would change how the agent splits the label text.
#include <cstdint>
#include <string>
#include <string_view>

namespace cn::labels {

inline constexpr std::size_t kMaxLabelText = 63;

// Name rule for keys: 1..63 chars of [A-Za-z0-9._-], alphanumeric at both ends. No DNS prefix
// (`example.com/name`): Nomad meta keys never need one and '/' is easier refused than escaped.
bool is_valid_label_key(std::string_view key);

// Value rule: empty, or 1..63 chars of [A-Za-z0-9._-], alphanumeric at both ends.
bool is_valid_label_value(std::string_view value);

// Valid values are returned unchanged. Anything else becomes
//   <cleaned prefix, at most 54 chars>-<8 hex digits>   (or only the 8 hex digits)
// where the prefix is the original with every run of disallowed bytes replaced by one '-',
// trimmed to alphanumerics at both ends, and the digits are a stable hash of the ORIGINAL bytes.
// Deterministic across runs and hosts; two different originals that clean to the same prefix
// still differ in the hash, so they keep distinct identities. The result is always valid.
std::string sanitize_label_value(std::string_view value);

// FNV-1a 64 of the bytes, folded to 32 bits: stable across platforms and releases, which the
// identity of a workload depends on. Not a security hash.
std::uint32_t stable_hash32(std::string_view bytes);

}  // namespace cn::labels
