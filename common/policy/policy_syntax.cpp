#include "common/policy/policy_syntax.h"

#include <algorithm>
#include <cctype>

#include "common/labels/label_text.h"

namespace cn::policy {
namespace {

bool is_lower_alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

bool is_digits(std::string_view s) {
  return !s.empty() && std::ranges::all_of(s, [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

bool is_dns1123_subdomain(std::string_view text) {
  if (text.empty() || text.size() > 253) return false;
  std::size_t start = 0;
  while (true) {
    std::size_t dot = text.find('.', start);
    std::string_view part =
        text.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    if (part.empty() || !is_lower_alnum(part.front()) || !is_lower_alnum(part.back())) return false;
    for (char c : part)
      if (!is_lower_alnum(c) && c != '-') return false;
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

bool is_nomad_namespace(std::string_view text) {
  if (text.empty() || text.size() > 128) return false;
  return std::ranges::all_of(
      text, [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '-'; });
}

std::optional<std::string> selector_key_problem(std::string_view key) {
  if (key.empty()) return "empty label key";
  // The agent's extension (pkg/labels GetExtendedKeyFrom): the source before the first ':'.
  std::string extended;
  if (key.front() == '$') {
    extended = "reserved.";
    extended += key.substr(1);
  } else if (auto colon = key.find(':'); colon != std::string_view::npos) {
    std::string_view source = key.substr(0, colon);
    extended =
        std::string(source.empty() ? "any" : source) + "." + std::string(key.substr(colon + 1));
  } else if (key.starts_with("reserved.")) {
    extended = std::string(key);
  } else {
    extended = "any." + std::string(key);
  }
  // Kubernetes IsQualifiedName: [<DNS-1123 subdomain>/]<name>.
  std::string_view qualified = extended;
  std::string_view name = qualified;
  if (auto slash = qualified.find('/'); slash != std::string_view::npos) {
    std::string_view prefix = qualified.substr(0, slash);
    name = qualified.substr(slash + 1);
    if (!is_dns1123_subdomain(prefix)) {
      return "label key \"" + std::string(key) + "\": the prefix \"" + std::string(prefix) +
             "\" before '/' is not a DNS-1123 subdomain";
    }
  }
  if (!labels::is_valid_label_key(name)) {
    return "label key \"" + std::string(key) + "\" is not valid: \"" + std::string(name) +
           "\" must be 1-63 characters of [A-Za-z0-9._-] starting and ending alphanumeric (the "
           "source before ':' counts as \"<source>.\")";
  }
  return std::nullopt;
}

std::optional<std::string> label_value_problem(std::string_view value) {
  if (labels::is_valid_label_value(value)) return std::nullopt;
  return "label value \"" + std::string(value) +
         "\" is not valid: at most 63 characters of [A-Za-z0-9._-], starting and ending "
         "alphanumeric";
}

bool is_port_name(std::string_view text) {
  if (text.empty() || text.size() > 15) return false;
  // The upstream pattern ([a-zA-Z0-9]-?)*[a-zA-Z](-?[a-zA-Z0-9])* spelled out: alphanumeric ends,
  // single hyphens between, at least one letter.
  if (text.front() == '-' || text.back() == '-' || text.find("--") != std::string_view::npos)
    return false;
  bool letter = false;
  for (char c : text) {
    auto u = static_cast<unsigned char>(c);
    if (std::isalpha(u))
      letter = true;
    else if (!std::isdigit(u) && c != '-')
      return false;
  }
  return letter;
}

std::optional<std::uint32_t> parse_port_number(std::string_view text) {
  if (!is_digits(text) || text.size() > 5 || (text.size() > 1 && text.front() == '0')) {
    return std::nullopt;
  }
  std::uint32_t n = 0;
  for (char c : text) n = n * 10 + static_cast<std::uint32_t>(c - '0');
  if (n > 65535) return std::nullopt;
  return n;
}

}  // namespace cn::policy
