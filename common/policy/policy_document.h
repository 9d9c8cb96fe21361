#pragma once
// Cilium network policies as the labeler distributes them: from a Nomad Variable's `policy` item
// to the one object written into the agent's static policy directory (--static-cnp-path).
//
// The agent exits on a file it cannot translate (docs/policies.md), so nothing reaches the
// directory without passing validate_policy_document(), the same check `policy validate` runs.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "common/util/result.h"

namespace cn::policy {

// A variable's items may hold 64 KiB in Nomad; a policy item larger than this is refused.
inline constexpr std::size_t kMaxPolicyBytes = std::size_t{64} * 1024;
// A written file is compact JSON of an item within kMaxPolicyBytes plus our annotations. YAML
// turned into JSON grows (every key and string gains quotes: `a: b` is 5 bytes, `"a":"b",` 8),
// but never to four times its size; a larger file in the directory is not one of ours.
inline constexpr std::size_t kMaxPolicyFileBytes = 4 * kMaxPolicyBytes;

// Annotations on every written object: where it came from, so `policy status` and a reader of
// the directory can trace a file back to its variable.
inline constexpr std::string_view kAnnotationNamespace = "cilium-nomad/variable-namespace";
inline constexpr std::string_view kAnnotationPath = "cilium-nomad/variable-path";
inline constexpr std::string_view kAnnotationModifyIndex = "cilium-nomad/modify-index";

// File names the labeler owns in the directory: "nomad-<name>.yaml".
inline constexpr std::string_view kFilePrefix = "nomad-";
inline constexpr std::string_view kFileSuffix = ".yaml";

struct PolicySource {
  std::string nomad_namespace;
  std::string variable_path;
  std::uint64_t modify_index = 0;
};

// Checks one policy document (YAML or JSON text): syntax, exactly one object, kind and
// apiVersion, the CRD schema (types, required fields, enums, patterns) and the cheap semantic
// rules of Cilium's rule validation. Error kind `invalid`; the message is
// "<JSON pointer inside the document>: <reason>" (the pointer is "/" for the whole document).
[[nodiscard]] Status validate_policy_document(std::string_view text);

// Turns a variable's `policy` item into the object to write, named `object_name`
// ("nomad-<name>"): a CiliumClusterwideNetworkPolicy or a CiliumNetworkPolicy as given, or a
// netreap rule array wrapped as a CCNP's `specs`. A CiliumNetworkPolicy without a namespace gets
// source.nomad_namespace (default_policy_namespace, common/policy/policy_delegation.h). Validated
// with validate_policy_document(); the result is normalized JSON with metadata.name and the
// annotations above set.
[[nodiscard]] Result<nlohmann::json> policy_object_from_item(std::string_view policy_item,
                                                             std::string_view object_name,
                                                             const PolicySource& source);

// What the variable list is asked for: "<prefix>/" (Nomad matches list prefixes as plain strings,
// so "cilium/policies" would also list "cilium/policies-old/x"), or "" for every variable.
std::string policy_list_prefix(std::string_view prefix);

// "<prefix>/a/b" -> "a.b", which must be a DNS-1123 subdomain that still is one with
// kFilePrefix in front. Error kind `invalid` with the reason otherwise.
[[nodiscard]] Result<std::string> policy_name_from_path(std::string_view prefix,
                                                        std::string_view path);

// The file of a policy is kFilePrefix + "<namespace>.<name>" + kFileSuffix: two namespaces may
// hold a variable at the same path, and their files must not collide. A Nomad namespace holds no
// '.', so the namespace reads back as everything before the first one. Error kind `invalid` when
// the result is not a DNS-1123 subdomain within the name limit (a namespace with uppercase
// letters, or a long namespace and name together).
[[nodiscard]] Result<std::string> policy_file_stem(std::string_view nomad_namespace,
                                                   std::string_view name);

}  // namespace cn::policy
