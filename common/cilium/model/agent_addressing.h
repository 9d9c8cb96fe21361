#pragma once
// The pod CIDRs an agent allocates from: GET /v1/config's status.addressing.{ipv4,ipv6}
// ["alloc-range"] (NodeAddressing in api/v1/openapi.yaml of cilium/cilium). The services
// feature refuses a VIP range that overlaps them.
#include <string_view>
#include <vector>

#include "common/util/ip_prefix.h"
#include "common/util/result.h"

namespace cn::cilium {

// Each enabled family's alloc-range; a disabled family (or one the agent leaves out) adds none.
// invalid when the body is not a DaemonConfiguration or a range is not a CIDR.
[[nodiscard]] Result<std::vector<IpPrefix>> parse_agent_alloc_ranges(std::string_view config_body);

}  // namespace cn::cilium
