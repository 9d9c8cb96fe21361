#pragma once
// A policy variable's optional `mode` item (docs/policies.md "Audit before enforce"): "audit"
// puts the policy's subject endpoints on each node in Cilium's policy audit mode, absent or
// "enforce" leaves them enforcing. The mode travels in the written file as an annotation, so
// the file alone tells it after a labeler restart, to the auditor (policy_auditor.h) and to
// `explain`, with no second record to keep in step.
#include <map>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "common/util/result.h"

namespace cn::labeler::policy {

enum class PolicyMode { enforce, audit };
std::string_view to_string(PolicyMode mode);

inline constexpr std::string_view kModeItem = "mode";
inline constexpr std::string_view kAnnotationMode = "cilium-nomad/mode";

// The `mode` item of a variable's items. Error kind `invalid` naming the value and the two
// accepted ones: a typo must not silently enforce (or audit).
[[nodiscard]] Result<PolicyMode> parse_policy_mode(const std::map<std::string, std::string>& items);

// Sets the annotation on an audit object and takes it off an enforce one (an item cannot
// claim audit by writing the annotation itself); files of enforce policies stay byte for byte
// what labelers without modes wrote.
void mark_policy_mode(nlohmann::json& object, PolicyMode mode);

// What a written object says: audit only when the annotation says exactly "audit".
PolicyMode policy_mode_of(const nlohmann::json& object);

}  // namespace cn::labeler::policy
