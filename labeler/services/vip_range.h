#pragma once
// The range service virtual IPs come from (--service-vip-range), and the order in which a
// service tries its addresses. Every node computes the same order from the service's name
// alone, so the first choice of most services is free and agreed without a round trip; the
// allocation table (Nomad Variables, check-and-set) only settles collisions.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/util/ip_prefix.h"
#include "common/util/result.h"

namespace cn::labeler {

class VipRange {
 public:
  // `cidr` must not overlap any of `taken` (the pod CIDRs, the node's own addresses): a VIP that
  // is also a pod's or a node's address would steal that address's traffic on every node.
  // IPv4 and IPv6 ranges both work. The range's first address (the network address; IPv6's
  // subnet-router anycast) and an IPv4 range's last (broadcast) are never handed out.
  [[nodiscard]] static Result<VipRange> parse(std::string_view cidr,
                                              const std::vector<IpPrefix>& taken = {});

  const IpPrefix& prefix() const { return prefix_; }
  bool v6() const { return prefix_.v6; }
  // How many addresses can be handed out.
  std::uint64_t capacity() const { return capacity_; }
  bool contains(const IpPrefix& address) const;

  // The address a service tries at its `attempt`-th choice (0 first). Choices walk the whole
  // range from a start taken from SHA-256 of "<namespace>/<name>", so attempts 0 .. capacity-1
  // visit every usable address once.
  IpPrefix choice(std::string_view nomad_namespace, std::string_view service_name,
                  std::uint64_t attempt) const;

 private:
  VipRange(IpPrefix prefix, std::uint64_t capacity) : prefix_(prefix), capacity_(capacity) {}

  IpPrefix prefix_;
  std::uint64_t capacity_ = 0;
};

}  // namespace cn::labeler
