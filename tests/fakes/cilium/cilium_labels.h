#pragma once
// Cilium's label model as the agent applies it (fact sheet section 5): `source:key=value`,
// sets keyed by KEY ONLY (so `nomad:job=a` and `other:job=b` collide), and the label filter
// that decides identity relevance. Written independently of common/labels on purpose: the fake
// must not share the product's assumptions.
#include <map>
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/util/result.h"

namespace cn::fakes::cilium {

struct Label {
  std::string source;
  std::string key;
  std::string value;
  // `source:key=value`, or `source:key` when the value is empty.
  std::string str() const;
  bool is_reserved() const { return source == "reserved"; }
  bool operator==(const Label&) const = default;
};

Label parse_label(std::string_view text);

// Keyed by Label::key, like Cilium's labels.Labels map.
using LabelMap = std::map<std::string, Label>;

LabelMap labels_from_model(const std::vector<std::string>& model);
std::vector<std::string> labels_to_model(const LabelMap& labels);  // sorted by printed form
LabelMap merge_labels(const LabelMap& base, const LabelMap& overlay);
std::vector<std::string> reserved_in(const LabelMap& labels);
// The bytes Cilium hashes for labelsSHA256: "source:key=value;" per label, sorted by key.
std::string sorted_kv_list(const LabelMap& labels);
// Cilium's Label.Equals: source `any` matches every source.
bool label_matches(const Label& wanted, const Label& have);

// `--labels` patterns: `[!][source:]regex`, the regex anchored at the start of the key; the
// longest matching include beats a shorter ignore. Any user include switches to allow-list mode.
class LabelFilter {
 public:
  static Result<LabelFilter> make(const std::vector<std::string>& user_patterns);
  // Splits a `--labels` value ("nomad:.* k8s:app", commas also accepted).
  static std::vector<std::string> split_patterns(std::string_view text);

  bool identity_relevant(const Label& label) const;
  // First: identity-relevant labels; second: the rest (information labels).
  std::pair<LabelMap, LabelMap> split(const LabelMap& labels) const;
  bool allow_list() const { return allow_list_; }
  const std::vector<std::string>& patterns() const { return texts_; }

 private:
  struct Pattern {
    bool ignore = false;
    std::string source;  // empty: any source
    std::regex expr;
  };
  std::vector<Pattern> patterns_;
  std::vector<std::string> texts_;
  bool allow_list_ = false;
};

}  // namespace cn::fakes::cilium
