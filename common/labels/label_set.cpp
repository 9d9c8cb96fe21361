#include "common/labels/label_set.h"

#include <algorithm>

namespace cn::labels {

namespace {

auto lower_bound_key(const std::vector<Label>& labels, std::string_view key) {
  return std::lower_bound(labels.begin(), labels.end(), key,
                          [](const Label& l, std::string_view k) { return l.key < k; });
}

}  // namespace

LabelSet LabelSet::from_strings(std::span<const std::string> texts) {
  // Sort once rather than insert one by one: agent lists are outside input and may be long.
  std::vector<Label> parsed;
  parsed.reserve(texts.size());
  for (const auto& text : texts) parsed.push_back(parse_label(text));
  std::stable_sort(parsed.begin(), parsed.end(),
                   [](const Label& a, const Label& b) { return a.key < b.key; });
  LabelSet set;
  set.labels_.reserve(parsed.size());
  for (auto& label : parsed) {
    if (!set.labels_.empty() && set.labels_.back().key == label.key) {
      set.labels_.back() = std::move(label);  // stable order: the later text wins
    } else {
      set.labels_.push_back(std::move(label));
    }
  }
  return set;
}

void LabelSet::insert(Label label) {
  auto it = std::lower_bound(labels_.begin(), labels_.end(), label.key,
                             [](const Label& l, const std::string& k) { return l.key < k; });
  if (it != labels_.end() && it->key == label.key) {
    *it = std::move(label);
  } else {
    labels_.insert(it, std::move(label));
  }
}

bool LabelSet::erase(std::string_view key) {
  auto it = lower_bound_key(labels_, key);
  if (it == labels_.end() || it->key != key) return false;
  labels_.erase(it);
  return true;
}

const Label* LabelSet::find(std::string_view key) const {
  auto it = lower_bound_key(labels_, key);
  if (it == labels_.end() || it->key != key) return nullptr;
  return &*it;
}

bool LabelSet::contains(const Label& label) const {
  const Label* found = find(label.key);
  return found != nullptr && *found == label;
}

bool LabelSet::has_source(std::string_view source) const {
  return std::any_of(labels_.begin(), labels_.end(),
                     [&](const Label& l) { return l.source == source; });
}

LabelSet LabelSet::only_source(std::string_view source) const {
  LabelSet out;
  for (const auto& l : labels_) {
    if (l.source == source) out.labels_.push_back(l);  // already sorted and unique
  }
  return out;
}

std::vector<std::string> LabelSet::to_strings() const {
  std::vector<std::string> out;
  out.reserve(labels_.size());
  for (const auto& l : labels_) out.push_back(l.to_string());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace cn::labels
