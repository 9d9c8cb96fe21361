#include "cni-plugin/version_rules.h"

#include <array>
#include <charconv>
#include <string>
#include <utility>

namespace cn::plugin {
namespace {

struct VersionRule {
  std::string_view command;
  std::string_view introduced_in;
};

constexpr std::array<VersionRule, 3> kRules = {{
    {"CHECK", "0.4.0"},
    {"GC", "1.1.0"},
    {"STATUS", "1.1.0"},
}};

using Semver = std::array<unsigned, 3>;

// Config versions reach this point already checked against the supported list, so every one is
// "major.minor.patch"; anything else compares as 0.0.0, i.e. too old for every rule.
Semver parse_semver(std::string_view text) {
  Semver out{};
  const char* p = text.data();
  const char* end = text.data() + text.size();
  for (std::size_t i = 0; i < out.size(); ++i) {
    auto [next, ec] = std::from_chars(p, end, out[i]);
    if (ec != std::errc{}) return Semver{};
    p = next;
    if (i + 1 < out.size()) {
      if (p == end || *p != '.') return Semver{};
      ++p;
    }
  }
  return p == end ? out : Semver{};
}

}  // namespace

std::optional<cni::CniError> version_rule_violation(std::string_view command,
                                                    std::string_view config_version) {
  for (const auto& rule : kRules) {
    if (rule.command != command) continue;
    if (parse_semver(config_version) >= parse_semver(rule.introduced_in)) return std::nullopt;
    return cni::CniError{cni::ErrorCode::kIncompatibleVersion,
                         "config version does not allow " + std::string(command),
                         std::string(command) + " needs cniVersion " +
                             std::string(rule.introduced_in) + " or newer; the config has \"" +
                             std::string(config_version) + "\""};
  }
  return std::nullopt;
}

}  // namespace cn::plugin
