#include "common/labels/label_text.h"

#include <algorithm>

namespace cn::labels {

namespace {

constexpr std::size_t kHashSuffixLength = 9;  // '-' + 8 hex digits

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

std::string to_hex8(std::uint32_t v) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out(8, '0');
  for (std::size_t i = 0; i < 8; ++i) {
    out[7 - i] = kDigits[v & 0xfU];
    v >>= 4;
  }
  return out;
}

}  // namespace

bool is_valid_label_key(std::string_view key) {
  return is_label_text(key);
}

bool is_valid_label_value(std::string_view value) {
  return value.empty() || is_label_text(value);
}

std::uint32_t stable_hash32(std::string_view bytes) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (char c : bytes) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ULL;
  }
  return static_cast<std::uint32_t>(h ^ (h >> 32));
}

std::string sanitize_label_value(std::string_view value) {
  if (is_valid_label_value(value)) return std::string(value);

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
  out += to_hex8(stable_hash32(value));
  return out;
}

}  // namespace cn::labels
