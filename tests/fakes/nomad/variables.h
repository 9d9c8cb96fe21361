#pragma once
// Nomad Variables as the fake stores them, the rules Nomad applies to a write, and the variables
// block of an ACL policy. Written from hashicorp/nomad nomad/structs/variables.go (validation),
// nomad/state/state_store_variables.go (check-and-set), acl/acl.go and acl/policy.go
// (capabilities, path globs); the wire shape follows the encoder's sorted-keys rule.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/fakes/nomad/model.h"

namespace cn::fakes {

struct VariableRecord {
  std::string namespace_ = "default";
  std::string path;
  StringMap items;
  std::uint64_t create_index = 0;
  std::uint64_t modify_index = 0;
  std::int64_t create_time = 0;  // UnixNano, like every Nomad time in HTTP JSON
  std::int64_t modify_time = 0;
};

// VariableMetadata: no Items (list answers and redacted conflicts).
nlohmann::json encode_variable_metadata(const VariableRecord& v);
// VariableDecrypted: metadata plus Items; Items is omitempty, so a zero-value conflict has none.
nlohmann::json encode_variable(const VariableRecord& v);

// Sum of key and value lengths, the quantity Nomad caps at 64 KiB.
std::size_t variable_items_size(const StringMap& items);
inline constexpr std::size_t kMaxVariableSize = 65536;

// VariableDecrypted.Validate for a set: the message Nomad answers with 400, or nullopt.
std::optional<std::string> validate_variable(const std::string& ns, const std::string& path,
                                             const StringMap& items);
// ValidatePath alone (the regex, then the reserved "nomad/" tree).
std::optional<std::string> validate_variable_path(const std::string& path);

// One `path "<glob>" { capabilities = [...] }` inside `namespace "<glob>" { variables { } }`.
struct VariablePathRule {
  std::string namespace_ = "default";     // may hold '*' globs, like the policy's namespace label
  std::string path;                       // may hold '*' globs
  std::vector<std::string> capabilities;  // list read write destroy deny
};

// The capability set a token holds for (namespace, path): an exact rule first, else the glob
// whose pattern is closest in length to the name. Nomad's expansion applies: "read" brings
// "list", "deny" stands alone. Empty: no rule matches.
std::vector<std::string> variable_capabilities(const std::vector<VariablePathRule>& rules,
                                               const std::string& ns, const std::string& path);
bool variable_allowed(const std::vector<VariablePathRule>& rules, const std::string& ns,
                      const std::string& path, const std::string& capability);

// go-glob (the matcher Nomad's ACL uses): '*' matches any run of characters, '/' included.
bool nomad_glob_match(const std::string& pattern, const std::string& subject);

}  // namespace cn::fakes
