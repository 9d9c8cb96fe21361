#pragma once
// An endpoint selector as the agent holds it after translation (cilium/cilium
// pkg/policy/api/selector.go): every key carries its label source ("k8s:app"; a key without
// one becomes "any:app"), matchLabels are equality requirements, matchExpressions use the four
// Kubernetes operators. Matching follows Cilium's LabelArray: "any:" matches a label of every
// source, another source only its own.
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/util/result.h"
#include "tests/fakes/cilium/cilium_labels.h"

namespace cn::fakes::cilium {

struct SelectorRequirement {
  std::string key;  // "source:key"
  std::string op;   // In NotIn Exists DoesNotExist
  std::vector<std::string> values;
};

// obj[key] when it is a string, else "": decoded values may be null where Go would leave a zero
// value.
std::string decoded_string(const nlohmann::json& obj, const char* key);

// "app" -> "any:app", "k8s:app" -> "k8s:app", "$host" -> "reserved:host".
std::string extended_selector_key(std::string_view key);

class EndpointSelector {
 public:
  // From a decoded LabelSelector object (types already checked by the translator). An unknown
  // operator or an In/NotIn without values is an error, as in the Kubernetes selector code.
  static Result<EndpointSelector> from_json(const nlohmann::json& selector);

  bool has_key(std::string_view extended_key) const;
  bool has_key_prefix(std::string_view extended_prefix) const;
  void add_match(const std::string& extended_key, const std::string& value);
  void add_exists(const std::string& extended_key);

  bool matches(const LabelMap& labels) const;
  nlohmann::json to_json() const;  // matchLabels / matchExpressions, keys extended

 private:
  std::map<std::string, std::string> match_labels_;
  std::vector<SelectorRequirement> match_expressions_;
};

}  // namespace cn::fakes::cilium
