#include "labeler/policy/policy_subjects.h"

#include <algorithm>

#include "common/labels/derive_labels.h"

namespace cn::labeler::policy {
namespace {

using nlohmann::json;

// The label a selector key names: "nomad:nomad.job" is source nomad; "app" is any source.
struct SelectorKey {
  std::string source;  // empty: any
  std::string key;
};

SelectorKey selector_key(const std::string& text) {
  auto colon = text.find(':');
  if (colon == std::string::npos) return {"", text};
  std::string source = text.substr(0, colon);
  return {source == "any" ? "" : source, text.substr(colon + 1)};
}

// The value of the label the key names, or nullptr. LabelSet holds one label per key, so a
// source-qualified key matches only when that slot carries the named source.
const labels::Label* find_label(const labels::LabelSet& labels, const SelectorKey& key) {
  const labels::Label* label = labels.find(key.key);
  if (!label || (!key.source.empty() && label->source != key.source)) return nullptr;
  return label;
}

bool strings_contain(const json& values, const std::string& value) {
  if (!values.is_array()) return false;
  return std::ranges::any_of(values, [&](const json& v) {
    return v.is_string() && v.get_ref<const std::string&>() == value;
  });
}

bool requirement_matches(const json& req, const labels::LabelSet& labels) {
  if (!req.is_object() || !req.contains("key") || !req["key"].is_string() ||
      !req.contains("operator") || !req["operator"].is_string()) {
    return false;
  }
  const labels::Label* label = find_label(labels, selector_key(req["key"].get<std::string>()));
  const auto& op = req["operator"].get_ref<const std::string&>();
  const json values = req.value("values", json::array());
  if (op == "Exists") return label != nullptr;
  if (op == "DoesNotExist") return label == nullptr;
  if (op == "In") return label && strings_contain(values, label->value);
  if (op == "NotIn") return !label || !strings_contain(values, label->value);
  return false;
}

bool rule_selects(const json& rule, const labels::LabelSet& labels, const std::string& ns) {
  if (!rule.is_object()) return false;
  auto selector = rule.find("endpointSelector");
  if (selector == rule.end()) return false;
  if (!ns.empty()) {
    const labels::Label* label = labels.find(labels::kKeyK8sNamespace);
    if (!label || label->source != "k8s" || label->value != ns) return false;
  }
  // null selects everything in the agent (selector.go), as {} does.
  return selector->is_null() || selector_matches(*selector, labels);
}

}  // namespace

bool selector_matches(const json& selector, const labels::LabelSet& labels) {
  if (!selector.is_object()) return false;
  if (auto ml = selector.find("matchLabels"); ml != selector.end() && !ml->is_null()) {
    if (!ml->is_object()) return false;
    for (const auto& [key, value] : ml->items()) {
      const labels::Label* label = find_label(labels, selector_key(key));
      if (!label || !value.is_string() || label->value != value.get_ref<const std::string&>()) {
        return false;
      }
    }
  }
  if (auto me = selector.find("matchExpressions"); me != selector.end() && !me->is_null()) {
    if (!me->is_array()) return false;
    for (const auto& req : *me) {
      if (!requirement_matches(req, labels)) return false;
    }
  }
  return true;
}

bool policy_selects(const json& policy, const labels::LabelSet& labels) {
  if (!policy.is_object()) return false;
  std::string ns;
  if (policy.value("kind", "") == "CiliumNetworkPolicy") {
    auto meta = policy.find("metadata");
    ns =
        meta != policy.end() && meta->is_object() ? meta->value("namespace", "default") : "default";
  }
  if (auto spec = policy.find("spec"); spec != policy.end() && rule_selects(*spec, labels, ns)) {
    return true;
  }
  if (auto specs = policy.find("specs"); specs != policy.end() && specs->is_array()) {
    return std::ranges::any_of(*specs,
                               [&](const json& rule) { return rule_selects(rule, labels, ns); });
  }
  return false;
}

}  // namespace cn::labeler::policy
