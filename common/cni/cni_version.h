#pragma once
#include <array>
#include <string>
#include <string_view>

namespace cn::cni {

inline constexpr std::array<std::string_view, 5> kSupportedVersions = {"0.3.0", "0.3.1", "0.4.0",
                                                                       "1.0.0", "1.1.0"};
inline constexpr std::string_view kNewestVersion = "1.1.0";

bool is_supported_version(std::string_view version);
// "0.3.0, 0.3.1, ...": how the fingerprint line and --version list them.
std::string supported_versions_text();

}  // namespace cn::cni
