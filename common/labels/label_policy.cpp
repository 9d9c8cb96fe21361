#include "common/labels/label_policy.h"

#include <algorithm>

#include "common/labels/label_text.h"

namespace cn::labels {

namespace {

std::string_view trim_blanks(std::string_view s) {
  auto blank = [](char c) { return c == ' ' || c == '\t'; };
  while (!s.empty() && blank(s.front())) s.remove_prefix(1);
  while (!s.empty() && blank(s.back())) s.remove_suffix(1);
  return s;
}

}  // namespace

std::string meta_key_problem(std::string_view key) {
  if (key.starts_with(kReservedKeyPrefix)) {
    return "keys starting with \"nomad.\" are reserved for the labeler's own labels";
  }
  if (!is_valid_label_key(key)) {
    return "not a valid label key (1-63 chars of A-Z a-z 0-9 . _ -, alphanumeric at both ends)";
  }
  return {};
}

Result<LabelPolicy> parse_label_policy(std::string_view text) {
  LabelPolicy policy;
  while (true) {
    auto comma = text.find(',');
    std::string_view item = trim_blanks(text.substr(0, comma));
    if (!item.empty()) {
      if (auto problem = meta_key_problem(item); !problem.empty()) {
        return fail("meta label key \"" + std::string(item) + "\": " + problem);
      }
      policy.meta_keys.emplace_back(item);
    }
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  std::sort(policy.meta_keys.begin(), policy.meta_keys.end());
  policy.meta_keys.erase(std::unique(policy.meta_keys.begin(), policy.meta_keys.end()),
                         policy.meta_keys.end());
  return policy;
}

}  // namespace cn::labels
