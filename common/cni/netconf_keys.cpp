#include "common/cni/netconf_keys.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <string>

#include "common/util/edit_distance.h"

namespace cn::cni {
namespace {

// Ours first: a suggestion should name one of our settings before a spec key.
constexpr std::array<std::string_view, 4> kOurKeys{"labeler-socket", "state-file",
                                                   "wait-for-labels-ms", "log-file"};
// CNI spec (SPEC.md, "Plugin configuration objects" and GC) and what libcni injects.
constexpr std::array<std::string_view, 12> kSpecKeys{"cniVersion",
                                                     "name",
                                                     "type",
                                                     "args",
                                                     "ipMasq",
                                                     "ipam",
                                                     "dns",
                                                     "capabilities",
                                                     "runtimeConfig",
                                                     "prevResult",
                                                     "cni.dev/valid-attachments",
                                                     "cni.dev/attachments"};

char fold(char c) {
  return c == '_' ? '-' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
}

bool known(std::string_view key) {
  return std::find(kOurKeys.begin(), kOurKeys.end(), key) != kOurKeys.end() ||
         std::find(kSpecKeys.begin(), kSpecKeys.end(), key) != kSpecKeys.end();
}

}  // namespace

std::vector<std::string> unknown_netconf_keys(const nlohmann::json& netconf) {
  std::vector<std::string> out;
  if (!netconf.is_object()) return out;
  for (const auto& [key, value] : netconf.items()) {
    if (!known(key)) out.push_back(key);
  }
  return out;
}

std::string nearest_netconf_key(std::string_view key) {
  constexpr std::size_t kMaxEdits = 3;
  std::string best;
  std::size_t best_distance = kMaxEdits + 1;
  auto consider = [&](std::string_view candidate) {
    const std::size_t d = edit_distance(key, candidate, fold);
    if (d < best_distance) {
      best_distance = d;
      best = std::string(candidate);
    }
  };
  for (auto k : kOurKeys) consider(k);
  for (auto k : kSpecKeys) consider(k);
  return best;
}

std::string describe_unknown_keys(const std::vector<std::string>& keys) {
  // The keys come from a file anyone may have edited: keep the line one line, and short.
  constexpr std::size_t kMaxKeys = 8;
  constexpr std::size_t kMaxKeyBytes = 64;
  std::string out;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (i == kMaxKeys) {
      out += ", and " + std::to_string(keys.size() - kMaxKeys) + " more";
      break;
    }
    const auto& key = keys[i];
    if (!out.empty()) out += ", ";
    for (char c : std::string_view(key).substr(0, kMaxKeyBytes)) {
      const auto u = static_cast<unsigned char>(c);
      out += u < 0x20 || u == 0x7f || c == '"' ? '?' : c;
    }
    if (key.size() > kMaxKeyBytes) out += "...";
    if (auto near = nearest_netconf_key(key); !near.empty()) {
      out += " (did you mean " + near + "?)";
    }
  }
  return out;
}

}  // namespace cn::cni
