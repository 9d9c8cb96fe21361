#include "labeler/policy/policy_mode.h"

#include <nlohmann/json.hpp>

namespace cn::labeler::policy {

std::string_view to_string(PolicyMode mode) {
  return mode == PolicyMode::audit ? "audit" : "enforce";
}

Result<PolicyMode> parse_policy_mode(const std::map<std::string, std::string>& items) {
  const auto item = items.find(std::string(kModeItem));
  if (item == items.end() || item->second == "enforce") return PolicyMode::enforce;
  if (item->second == "audit") return PolicyMode::audit;
  std::string shown = item->second.substr(0, 64);
  for (char& c : shown) {
    if (static_cast<unsigned char>(c) < 0x20 || c == '"') c = '?';
  }
  return fail(ErrorKind::invalid,
              "the mode item is \"" + shown + "\"; it must be \"audit\" or \"enforce\"");
}

void mark_policy_mode(nlohmann::json& object, PolicyMode mode) {
  if (!object.is_object()) return;
  if (mode == PolicyMode::enforce) {
    // The item's own annotation must not stand in for the mode item: only the variable's
    // `mode` decides.
    auto meta = object.find("metadata");
    if (meta == object.end() || !meta->is_object()) return;
    auto annotations = meta->find("annotations");
    if (annotations != meta->end() && annotations->is_object())
      annotations->erase(std::string(kAnnotationMode));
    return;
  }
  nlohmann::json& annotations = object["metadata"]["annotations"];
  if (!annotations.is_object()) annotations = nlohmann::json::object();
  annotations[std::string(kAnnotationMode)] = "audit";
}

PolicyMode policy_mode_of(const nlohmann::json& object) {
  if (!object.is_object()) return PolicyMode::enforce;
  const auto meta = object.find("metadata");
  if (meta == object.end() || !meta->is_object()) return PolicyMode::enforce;
  const auto annotations = meta->find("annotations");
  if (annotations == meta->end() || !annotations->is_object()) return PolicyMode::enforce;
  const auto mode = annotations->find(std::string(kAnnotationMode));
  return mode != annotations->end() && mode->is_string() && *mode == "audit" ? PolicyMode::audit
                                                                             : PolicyMode::enforce;
}

}  // namespace cn::labeler::policy
