#pragma once
// Interface names as Linux and CNI take them: one definition for the plugin's CNI_IFNAME check,
// the notify protocol, endpoint IDs (`cni-attachment-id:<alloc>:<ifname>`) and the labeler.
#include <string_view>

namespace cn::cni {

// Nomad's CNI networking (client/allocrunner/networking_cni.go) attaches one interface per
// allocation through containerd/go-cni, whose default prefix "eth" names it eth0; used wherever
// a record does not say which interface.
inline constexpr std::string_view kDefaultIfname = "eth0";

// Linux's dev_valid_name(): 1..15 bytes (IFNAMSIZ - 1), not "." or "..", no '/', ':',
// whitespace or control bytes.
bool is_valid_ifname(std::string_view ifname);

}  // namespace cn::cni
