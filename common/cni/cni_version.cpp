#include "common/cni/cni_version.h"

#include <algorithm>

namespace cn::cni {

bool is_supported_version(std::string_view version) {
  return std::find(kSupportedVersions.begin(), kSupportedVersions.end(), version) !=
         kSupportedVersions.end();
}

}  // namespace cn::cni
