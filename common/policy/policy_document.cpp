#include "common/policy/policy_document.h"

#include "common/policy/policy_delegation.h"
#include "common/policy/policy_object.h"
#include "common/policy/policy_syntax.h"
#include "common/policy/policy_text.h"

namespace cn::policy {
namespace {

using nlohmann::json;

// The longest name whose file "nomad-<name>.yaml" is still a DNS-1123 subdomain (<= 253), which
// the agent's directory watcher requires of the file's base name.
constexpr std::size_t kMaxNameLength = 253 - kFilePrefix.size() - kFileSuffix.size();

// What the API server owns in metadata; a copy from `kubectl get -o yaml` carries them.
constexpr std::string_view kKeptMetadata[] = {"name", "namespace", "labels", "annotations"};

}  // namespace

Status validate_policy_document(std::string_view text) {
  auto doc = parse_policy_text(text);
  if (!doc) return std::unexpected(doc.error());
  return validate_policy_object(*doc);
}

Result<json> policy_object_from_item(std::string_view policy_item, std::string_view object_name,
                                     const PolicySource& source) {
  auto doc = parse_policy_text(policy_item);
  if (!doc) return std::unexpected(doc.error());
  bool wrapped = doc->is_array();
  json out;
  if (wrapped) {
    // netreap's `cilium policy import` format: a bare rule array, clusterwide by nature.
    out = json{{"apiVersion", kApiVersion},
               {"kind", kKindClusterwide},
               {"metadata", json::object()},
               {"specs", std::move(*doc)}};
  } else if (doc->is_object()) {
    out = std::move(*doc);
    out.erase("status");
    if (auto meta = out.find("metadata"); meta != out.end() && meta->is_object()) {
      json kept = json::object();
      for (auto key : kKeptMetadata) {
        if (auto it = meta->find(key); it != meta->end() && !it->is_null()) kept[key] = *it;
      }
      *meta = std::move(kept);
    } else if (meta == out.end() || meta->is_null()) {
      out["metadata"] = json::object();
    }
  } else {
    return fail(ErrorKind::invalid, "/: the document must be one object or a rule array");
  }
  default_policy_namespace(out, source.nomad_namespace);
  if (out["metadata"].is_object()) {
    out["metadata"]["name"] = std::string(object_name);
    json& annotations = out["metadata"]["annotations"];
    if (!annotations.is_object()) annotations = json::object();
    annotations[std::string(kAnnotationNamespace)] = source.nomad_namespace;
    annotations[std::string(kAnnotationPath)] = source.variable_path;
    annotations[std::string(kAnnotationModifyIndex)] = std::to_string(source.modify_index);
  }
  if (auto ok = validate_policy_object(out); !ok) {
    Error error = ok.error();
    // Point into what the user wrote: "/specs/3/..." of the wrapper is "/3/..." of the array.
    if (wrapped && error.message.starts_with("/specs/")) error.message.erase(0, 6);
    return std::unexpected(std::move(error));
  }
  return out;
}

std::string policy_list_prefix(std::string_view prefix) {
  while (prefix.ends_with('/')) prefix.remove_suffix(1);
  return prefix.empty() ? std::string() : std::string(prefix) + "/";
}

Result<std::string> policy_name_from_path(std::string_view prefix, std::string_view path) {
  while (prefix.ends_with('/')) prefix.remove_suffix(1);
  // An empty prefix (every variable of the namespace) names a policy by its whole path.
  std::size_t skip = prefix.empty() ? 0 : prefix.size() + 1;
  if (!path.starts_with(prefix) || path.size() <= skip ||
      (!prefix.empty() && path[prefix.size()] != '/')) {
    return fail(ErrorKind::invalid, "variable \"" + std::string(path) + "\" is not under \"" +
                                        std::string(prefix) + "/\"");
  }
  std::string name(path.substr(skip));
  for (char& c : name)
    if (c == '/') c = '.';
  if (name.size() > kMaxNameLength) {
    return fail(ErrorKind::invalid, "policy name \"" + name + "\" is longer than " +
                                        std::to_string(kMaxNameLength) + " characters");
  }
  if (!is_dns1123_subdomain(name)) {
    return fail(ErrorKind::invalid,
                "policy name \"" + name + "\" (from \"" + std::string(path) +
                    "\") is not a DNS-1123 subdomain: lowercase letters, digits, '-' and '.', "
                    "each '/'-separated part starting and ending with a letter or digit");
  }
  return name;
}

Result<std::string> policy_file_stem(std::string_view nomad_namespace, std::string_view name) {
  std::string stem = std::string(nomad_namespace) + "." + std::string(name);
  if (stem.size() > kMaxNameLength) {
    return fail(ErrorKind::invalid, "the policy's file name \"" + std::string(kFilePrefix) + stem +
                                        std::string(kFileSuffix) + "\" is longer than " +
                                        std::to_string(kMaxNameLength) + " characters without \"" +
                                        std::string(kFilePrefix) + "\" and \"" +
                                        std::string(kFileSuffix) + "\"");
  }
  if (!is_dns1123_subdomain(stem)) {
    return fail(ErrorKind::invalid,
                "Nomad namespace \"" + std::string(nomad_namespace) +
                    "\" cannot be part of a policy file name, which the agent requires to be a "
                    "DNS-1123 subdomain (lowercase letters, digits and '-', starting and ending "
                    "with a letter or digit)");
  }
  return stem;
}

}  // namespace cn::policy
