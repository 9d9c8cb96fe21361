#pragma once
// Reads the container-side addresses out of a previous result, in any result version we speak
// (0.3.x/0.4.0 carry ips[].version; 1.x do not). cilium-cni lists the host veth first and the
// container interface (the one with `sandbox`) last; every ips[] entry points at it.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/util/result.h"

namespace cn::cni {

struct SandboxAddresses {
  std::string interface_name;    // empty when no interface has a sandbox
  std::vector<std::string> ips;  // without prefix length; IPv6 and IPv4 as listed
};

// Fails only when prevResult is structurally broken (wrong types); a result without a sandbox
// interface is valid and yields no addresses.
[[nodiscard]] Result<SandboxAddresses> sandbox_addresses(const nlohmann::json& prev_result);

}  // namespace cn::cni
