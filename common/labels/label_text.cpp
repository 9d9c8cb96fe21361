#include "common/labels/label_text.h"

#include <algorithm>

#include "common/util/sha256.h"

namespace cn::labels {

namespace {

constexpr std::size_t kHashDigits = 16;
constexpr std::size_t kHashSuffixLength = 1 + kHashDigits;  // '-' + the digits

bool is_alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

bool is_label_char(char c) {
  return is_alnum(c) || c == '-' || c == '_' || c == '.';
}

bool is_label_text(std::string_view text) {
  if (text.empty() || text.size() > kMaxLabelText) return false;
  if (!is_alnum(text.front()) || !is_alnum(text.back())) return false;
  return std::ranges::all_of(text, is_label_char);
}

std::string_view trim_to_alnum(std::string_view text) {
  while (!text.empty() && !is_alnum(text.front())) text.remove_prefix(1);
  while (!text.empty() && !is_alnum(text.back())) text.remove_suffix(1);
  return text;
}

bool is_hash_digit(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

// What every hashed value ends with: 16 hex digits, alone or after a '-'.
bool has_hash_form(std::string_view value) {
  if (value.size() < kHashDigits) return false;
  auto digits = value.substr(value.size() - kHashDigits);
  if (!std::ranges::all_of(digits, is_hash_digit)) return false;
  return value.size() == kHashDigits || value[value.size() - kHashDigits - 1] == '-';
}

}  // namespace

bool is_valid_label_key(std::string_view key) {
  return is_label_text(key);
}

bool is_valid_label_value(std::string_view value) {
  return value.empty() || is_label_text(value);
}

std::string label_hash(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  const auto digest = sha256(bytes);
  std::string out;
  out.reserve(kHashDigits);
  for (std::size_t i = 0; i < kHashDigits / 2; ++i) {
    out.push_back(kDigits[digest[i] >> 4]);
    out.push_back(kDigits[digest[i] & 0xfU]);
  }
  return out;
}

std::string sanitize_label_value(std::string_view value) {
  // A valid value in the hashed form is hashed too: otherwise a job could be named exactly what
  // another job's name becomes (`a/b` -> `a-b-<digits>`) and share its labels.
  if (is_valid_label_value(value) && !has_hash_form(value)) return std::string(value);

  std::string cleaned;
  cleaned.reserve(std::min(value.size(), kMaxLabelText));
  constexpr std::size_t kPrefixLimit = kMaxLabelText - kHashSuffixLength;
  bool in_bad_run = false;
  for (char c : value) {
    // Leading junk is dropped as it comes, so once the prefix is full nothing later can matter:
    // bounded work on a huge value.
    if (cleaned.size() > kPrefixLimit) break;
    if (cleaned.empty() && !is_alnum(c)) continue;
    if (is_label_char(c)) {
      cleaned.push_back(c);
      in_bad_run = false;
    } else if (!in_bad_run) {
      cleaned.push_back('-');
      in_bad_run = true;
    }
  }
  std::string_view prefix = trim_to_alnum(cleaned);
  if (prefix.size() > kPrefixLimit) prefix = trim_to_alnum(prefix.substr(0, kPrefixLimit));

  std::string out(prefix);
  if (!out.empty()) out.push_back('-');
  out += label_hash(value);
  return out;
}

}  // namespace cn::labels
