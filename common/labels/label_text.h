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

// Valid values are returned unchanged, unless they end in the hashed form below. Anything else
// becomes
//   <cleaned prefix, at most 46 chars>-<16 hex digits>   (or only the 16 hex digits)
// where the prefix is the original with every run of disallowed bytes replaced by one '-',
// trimmed to alphanumerics at both ends, and the digits are label_hash() of the ORIGINAL bytes.
// Deterministic across runs and hosts. Two different originals give the same value only if
// they share 64 bits of SHA-256, which nobody can search for (2^64 tries for a chosen target);
// a value passed through never has the hashed form, so it cannot equal a hashed one. The
// result is always valid.
std::string sanitize_label_value(std::string_view value);

// The first 64 bits of SHA-256 of the bytes, as 16 lowercase hex digits: stable across platforms
// and releases, which the identity of a workload depends on.
std::string label_hash(std::string_view bytes);

}  // namespace cn::labels
