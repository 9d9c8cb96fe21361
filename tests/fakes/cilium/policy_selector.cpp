#include "tests/fakes/cilium/policy_selector.h"

#include <algorithm>

namespace cn::fakes::cilium {

using nlohmann::json;

namespace {

// LabelArray.Has/Get with a "source:key" selector key.
const Label* find_label(const LabelMap& labels, const std::string& extended_key) {
  const std::size_t colon = extended_key.find(':');
  const std::string source = extended_key.substr(0, colon);
  const std::string key = extended_key.substr(colon + 1);
  auto it = labels.find(key);
  if (it == labels.end()) return nullptr;
  if (source != "any" && it->second.source != source) return nullptr;
  return &it->second;
}

bool requirement_holds(const SelectorRequirement& r, const LabelMap& labels) {
  const Label* l = find_label(labels, r.key);
  auto in_values = [&] {
    return l && std::find(r.values.begin(), r.values.end(), l->value) != r.values.end();
  };
  if (r.op == "In") return in_values();
  if (r.op == "NotIn") return !in_values();
  if (r.op == "Exists") return l != nullptr;
  return l == nullptr;  // DoesNotExist
}

}  // namespace

std::string decoded_string(const json& obj, const char* key) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : "";
}

std::string extended_selector_key(std::string_view key) {
  if (key.starts_with('$')) return "reserved:" + std::string(key.substr(1));
  const std::size_t colon = key.find(':');
  if (colon == std::string_view::npos) return "any:" + std::string(key);
  if (colon == 0) return "any" + std::string(key);
  return std::string(key);
}

Result<EndpointSelector> EndpointSelector::from_json(const json& selector) {
  EndpointSelector s;
  if (selector.is_null()) return s;
  if (auto ml = selector.find("matchLabels"); ml != selector.end() && ml->is_object()) {
    for (const auto& [k, v] : ml->items()) {
      s.match_labels_[extended_selector_key(k)] = v.is_string() ? v.get<std::string>() : "";
    }
  }
  if (auto me = selector.find("matchExpressions"); me != selector.end() && me->is_array()) {
    for (const auto& e : *me) {
      SelectorRequirement r;
      if (!e.is_object()) continue;
      r.key = extended_selector_key(decoded_string(e, "key"));
      r.op = decoded_string(e, "operator");
      if (auto vals = e.find("values"); vals != e.end() && vals->is_array()) {
        for (const auto& v : *vals) r.values.push_back(v.is_string() ? v.get<std::string>() : "");
      }
      if (r.op == "In" || r.op == "NotIn") {
        if (r.values.empty()) {
          return fail(
              "values: Invalid value: []string(nil): for 'in', 'notin' operators, "
              "values set can't be empty");
        }
      } else if (r.op == "Exists" || r.op == "DoesNotExist") {
        if (!r.values.empty()) {
          return fail(
              "values: Invalid value: for 'exists', 'doesnotexist' operators, values "
              "set must be empty");
        }
      } else {
        return fail("\"" + r.op + "\" is not a valid label selector operator");
      }
      s.match_expressions_.push_back(std::move(r));
    }
  }
  return s;
}

bool EndpointSelector::has_key(std::string_view extended_key) const {
  if (match_labels_.contains(std::string(extended_key))) return true;
  return std::any_of(match_expressions_.begin(), match_expressions_.end(),
                     [&](const SelectorRequirement& r) { return r.key == extended_key; });
}

bool EndpointSelector::has_key_prefix(std::string_view extended_prefix) const {
  for (const auto& [k, v] : match_labels_) {
    if (k.starts_with(extended_prefix)) return true;
  }
  return std::any_of(
      match_expressions_.begin(), match_expressions_.end(),
      [&](const SelectorRequirement& r) { return r.key.starts_with(extended_prefix); });
}

void EndpointSelector::add_match(const std::string& extended_key, const std::string& value) {
  match_labels_[extended_key] = value;
}

void EndpointSelector::add_exists(const std::string& extended_key) {
  match_expressions_.push_back(SelectorRequirement{extended_key, "Exists", {}});
}

bool EndpointSelector::matches(const LabelMap& labels) const {
  for (const auto& [k, v] : match_labels_) {
    if (!requirement_holds(SelectorRequirement{k, "In", {v}}, labels)) return false;
  }
  return std::all_of(match_expressions_.begin(), match_expressions_.end(),
                     [&](const SelectorRequirement& r) { return requirement_holds(r, labels); });
}

json EndpointSelector::to_json() const {
  json out = json::object();
  if (!match_labels_.empty()) out["matchLabels"] = match_labels_;
  if (!match_expressions_.empty()) {
    json exprs = json::array();
    for (const auto& r : match_expressions_) {
      json e = {{"key", r.key}, {"operator", r.op}};
      if (!r.values.empty()) e["values"] = r.values;
      exprs.push_back(e);
    }
    out["matchExpressions"] = exprs;
  }
  return out;
}

}  // namespace cn::fakes::cilium
