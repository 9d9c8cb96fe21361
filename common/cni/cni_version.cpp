#include "common/cni/cni_version.h"

#include <algorithm>

namespace cn::cni {

bool is_supported_version(std::string_view version) {
  return std::find(kSupportedVersions.begin(), kSupportedVersions.end(), version) !=
         kSupportedVersions.end();
}

std::string supported_versions_text() {
  std::string out;
  for (auto v : kSupportedVersions) {
    if (!out.empty()) out += ", ";
    out += v;
  }
  return out;
}

}  // namespace cn::cni
