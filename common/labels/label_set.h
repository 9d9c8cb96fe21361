#pragma once
// A set of labels keyed by key alone, because that is how the Cilium agent stores them
// (`nomad:job=a` and `other:job=b` are the same slot). When two labels share a key the one
// inserted LAST wins, matching the agent's map assignment when it reads a label list.
#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/labels/label.h"

namespace cn::labels {

class LabelSet {
 public:
  using const_iterator = std::vector<Label>::const_iterator;

  LabelSet() = default;

  // Agent label strings in order; later duplicates of a key replace earlier ones.
  static LabelSet from_strings(std::span<const std::string> texts);

  // Replaces any label with the same key.
  void insert(Label label);
  bool erase(std::string_view key);

  const Label* find(std::string_view key) const;
  bool contains(const Label& label) const;
  bool has_source(std::string_view source) const;

  // The labels of one source, e.g. only ours (`nomad`) out of an endpoint's identity.
  LabelSet only_source(std::string_view source) const;

  std::size_t size() const { return labels_.size(); }
  bool empty() const { return labels_.empty(); }
  const_iterator begin() const { return labels_.begin(); }
  const_iterator end() const { return labels_.end(); }

  // Text forms, sorted as strings: the canonical body of a label write and of a log line.
  std::vector<std::string> to_strings() const;

  friend bool operator==(const LabelSet&, const LabelSet&) = default;

 private:
  std::vector<Label> labels_;  // sorted by key, keys unique
};

}  // namespace cn::labels
