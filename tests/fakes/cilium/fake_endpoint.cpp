#include "tests/fakes/cilium/fake_endpoint.h"
#include "tests/fakes/http/status_error.h"

namespace cn::fakes::cilium {

bool OpLabels::is_init() const {
  const LabelMap ids = identity_labels();
  const auto it = ids.find("init");
  return it != ids.end() && it->second.source == "reserved";
}

std::pair<LabelMap, LabelMap> OpLabels::split_user_label_changes(const LabelMap& desired) const {
  std::pair<LabelMap, LabelMap> out;
  for (const auto& [k, l] : desired) {
    if (!custom.contains(k)) out.first[k] = l;
  }
  for (const auto& [k, l] : custom) {
    if (!desired.contains(k)) out.second[k] = l;
  }
  return out;
}

Result<bool> OpLabels::modify_identity_labels(const LabelMap& add, const LabelMap& del) {
  for (const auto& [k, l] : del) {
    if (!custom.contains(k) && !orchestration_identity.contains(k) && !disabled.contains(k)) {
      return http_fail("label " + k + " not found", 404);
    }
  }
  bool changed = false;
  for (const auto& [k, l] : del) {
    if (const auto it = orchestration_identity.find(k); it != orchestration_identity.end()) {
      disabled[k] = it->second;
      orchestration_identity.erase(it);
      changed = true;
    }
    if (custom.erase(k) > 0) changed = true;
  }
  for (const auto& [k, l] : add) {
    if (const auto it = disabled.find(k); it != disabled.end()) {
      disabled.erase(it);
      orchestration_identity[k] = l;
    } else if (orchestration_identity.contains(k)) {
      orchestration_identity[k] = l;
    } else {
      custom[k] = l;
    }
    changed = true;
  }
  return changed;
}

bool OpLabels::replace_identity_labels(const LabelMap& labels) {
  bool changed = false;
  LabelMap identity, still_disabled;
  for (const auto& [k, l] : labels) {
    if (const auto d = disabled.find(k); d != disabled.end()) {
      still_disabled[k] = d->second;
      continue;
    }
    const auto old = orchestration_identity.find(k);
    if (old == orchestration_identity.end() || !(old->second == l)) changed = true;
    identity[k] = l;
  }
  for (const auto& [k, l] : orchestration_identity) {
    if (!identity.contains(k)) changed = true;
  }
  if (still_disabled.size() != disabled.size()) changed = true;
  orchestration_identity = std::move(identity);
  disabled = std::move(still_disabled);
  return changed;
}

bool OpLabels::replace_information_labels(const LabelMap& labels) {
  const bool changed = labels != orchestration_info;
  orchestration_info = labels;
  return changed;
}

bool OpLabels::has_all(const std::vector<Label>& wanted) const {
  for (const Label& w : wanted) {
    bool found = false;
    for (const LabelMap* bucket :
         {&custom, &orchestration_identity, &disabled, &orchestration_info}) {
      for (const auto& [k, have] : *bucket) {
        if (label_matches(w, have)) {
          found = true;
          break;
        }
      }
      if (found) break;
    }
    if (!found) return false;
  }
  return true;
}

std::string FakeEndpoint::cni_attachment_id() const {
  if (container_id.empty()) return {};
  if (container_interface_name.empty()) return container_id;
  return container_id + ":" + container_interface_name;
}

bool FakeEndpoint::reserved_endpoint() const {
  if (labels.is_init()) return false;
  return !reserved_in(labels.orchestration_identity).empty();
}

}  // namespace cn::fakes::cilium
