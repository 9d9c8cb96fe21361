#pragma once
// What `cilium-nomad-labeler run` is told about the services feature (README, "Nomad services on
// Cilium's load balancer"; docs/services.md).
#include <chrono>
#include <string>

namespace cn::labeler {

// --lb-api: how services reach the agent. auto asks the agent which it supports.
enum class LbApiChoice { automatic, state_file, rest };

struct ServicesSettings {
  std::string lb_state_file;  // --lb-state-file; the feature is off while empty (and not rest)
  std::string vip_range;      // --service-vip-range, a CIDR of either family
  LbApiChoice api = LbApiChoice::automatic;
  std::chrono::seconds check_interval{5};  // --service-check-interval
  std::chrono::seconds vip_grace{3600};    // --service-vip-grace
  std::chrono::seconds resync_interval{300};

  bool enabled() const { return !lb_state_file.empty() || api == LbApiChoice::rest; }
};

}  // namespace cn::labeler
