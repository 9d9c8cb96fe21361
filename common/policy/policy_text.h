#pragma once
// Policy text (YAML or JSON, as the agent's directory watcher reads it) to one JSON value.
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "common/policy/policy_document.h"
#include "common/util/result.h"

namespace cn::policy {

// Nesting deeper than this is refused before it is built; real policies stay below 20.
inline constexpr int kMaxPolicyDepth = 64;

// Exactly one document, at most `max_bytes` (a variable's item: kMaxPolicyBytes; a file the
// distributor wrote: kMaxPolicyFileBytes). Text that parses as strict JSON is read as JSON;
// anything else goes through yaml-cpp. YAML is read with the types Go's YAML-to-JSON step would
// give, and what could be read two ways is refused rather than guessed (docs/policies.md):
//   - quoted, block and !!str scalars are strings; plain scalars are null (~, null, empty),
//     booleans (true, True, TRUE, and the same for false), decimal integers, decimal floats,
//     else strings;
//   - plain yes/no/on/off/y/n (YAML 1.1 booleans), other spellings of true/false,
//     octal/hex/underscored/sexagesimal-looking numbers, .inf/.nan are refused: "quote it";
//   - unquoted keys that are not strings (on, true, 1.0) are refused, decimal integers are kept;
//   - anchors, aliases, merge keys (<<), non-scalar keys, duplicate keys and other tags are
//   refused.
// Errors are `invalid` with "/: <reason>" or "<JSON pointer>: <reason>".
[[nodiscard]] Result<nlohmann::json> parse_policy_text(std::string_view text,
                                                       std::size_t max_bytes = kMaxPolicyBytes);

// What Go's YAML reader (a port of libyaml's reader) refuses before parsing: invalid UTF-8, and
// characters outside YAML's printable set (most control characters). The agent reads every file
// with it, JSON included. nullopt when the text is fine, else why.
std::optional<std::string> unreadable_text(std::string_view text);

// RFC 6901 escaping of one reference token ("~" -> "~0", "/" -> "~1").
std::string pointer_token(std::string_view key);

}  // namespace cn::policy
