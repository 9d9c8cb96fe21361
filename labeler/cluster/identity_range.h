#pragma once
// The numeric identities one cluster's agents allocate, as upstream computes them
// (cilium/cilium pkg/clustermesh/types/types.go, ClusterInfo.MinimalAllocationIdentity and
// MaximumAllocationIdentity; older releases: pkg/identity/numericidentity.go,
// GetMinimalAllocationIdentity/GetMaximumAllocationIdentity). A numeric identity has 24 bits;
// the top log2(max-connected-clusters + 1) of them are the cluster ID, so the cluster's range is
// the block of the remaining bits at its ID, less the reserved IDs below 256 for cluster 0.
// The identity GC collects exactly this range: another cluster of a ClusterMesh sharing the etcd
// owns its own block, and only its own agents know which of its identities are in use.
#include <cstdint>
#include <optional>
#include <string>

#include "common/util/result.h"

namespace cn::labeler::cluster {

// Upstream's two supported values of --max-connected-clusters (types.go InitClusterIDMax).
inline constexpr std::uint32_t kMaxConnectedClustersDefault = 255;
inline constexpr std::uint32_t kMaxConnectedClustersExtended = 511;

struct IdentityRange {
  std::uint32_t cluster_id = 0;
  std::uint32_t max_connected_clusters = kMaxConnectedClustersDefault;
  std::uint64_t min = 0;  // first ID the cluster's allocator hands out
  std::uint64_t max = 0;  // last one
  std::uint64_t size() const { return max - min + 1; }
  bool contains(std::uint64_t id) const { return id >= min && id <= max; }
  friend bool operator==(const IdentityRange&, const IdentityRange&) = default;
};

// Fails (invalid) when max_connected_clusters is not 255 or 511, or cluster_id above it: the agent
// refuses to start with either, so such a pair cannot describe a running cluster.
[[nodiscard]] Result<IdentityRange> identity_range(std::uint32_t cluster_id,
                                                   std::uint32_t max_connected_clusters);

// Where the GC takes the cluster ID and max-connected-clusters from: each flag, when given, wins
// over the agent's configuration for that value. Unknown (either value from neither source) or
// contradictory (a flag and the agent disagree: one of them points at another cluster's block)
// fails, and the GC refuses to run rather than guess.
struct IdentityRangeSources {
  std::optional<std::uint32_t> flag_cluster_id;
  std::optional<std::uint32_t> flag_max_connected_clusters;
  std::optional<std::uint32_t> agent_cluster_id;
  std::optional<std::uint32_t> agent_max_connected_clusters;
};
[[nodiscard]] Result<IdentityRange> resolve_identity_range(const IdentityRangeSources& sources);

std::string describe(const IdentityRange& range);

}  // namespace cn::labeler::cluster
