#pragma once
// This node's own interface addresses (getifaddrs(3)): a VIP range must not cover any of them,
// or every node would send that address's traffic to the load balancer.
#include <vector>

#include "common/util/ip_prefix.h"
#include "common/util/result.h"

namespace cn::labeler {

[[nodiscard]] Result<std::vector<IpPrefix>> node_interface_addresses();

}  // namespace cn::labeler
