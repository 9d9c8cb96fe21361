#include "labeler/cluster/identity_range.h"

#include <bit>

namespace cn::labeler::cluster {

namespace {

// Bits of a numeric identity (identity/numericidentity Bitlength); the lowest 256 IDs are the
// reserved and well-known ones, never allocated (MinimalIdentity).
constexpr std::uint32_t kIdentityBits = 24;
constexpr std::uint64_t kMinimalIdentity = 256;

Result<std::uint32_t> pick(const char* what, const std::optional<std::uint32_t>& flag,
                           const std::optional<std::uint32_t>& agent) {
  if (flag && agent && *flag != *agent) {
    return fail(ErrorKind::invalid, std::string("--") + what + "=" + std::to_string(*flag) +
                                        " but the agent runs with " + std::to_string(*agent));
  }
  if (flag) return *flag;
  if (agent) return *agent;
  return fail(ErrorKind::invalid, std::string(what) +
                                      " unknown: the agent's configuration does not tell it and "
                                      "--" +
                                      what + " is not set");
}

}  // namespace

Result<IdentityRange> identity_range(std::uint32_t cluster_id,
                                     std::uint32_t max_connected_clusters) {
  if (max_connected_clusters != kMaxConnectedClustersDefault &&
      max_connected_clusters != kMaxConnectedClustersExtended) {
    return fail(ErrorKind::invalid, "max-connected-clusters " +
                                        std::to_string(max_connected_clusters) +
                                        ": Cilium supports 255 or 511");
  }
  if (cluster_id > max_connected_clusters) {
    return fail(ErrorKind::invalid, "cluster-id " + std::to_string(cluster_id) +
                                        " above max-connected-clusters " +
                                        std::to_string(max_connected_clusters));
  }
  // 255 -> 8 bits of cluster ID, 16 of identity; 511 -> 9 and 15.
  const auto cluster_bits =
      static_cast<std::uint32_t>(std::bit_width(std::uint64_t{max_connected_clusters}));
  const std::uint32_t shift = kIdentityBits - cluster_bits;
  IdentityRange r;
  r.cluster_id = cluster_id;
  r.max_connected_clusters = max_connected_clusters;
  r.min = cluster_id > 0 ? (std::uint64_t{1} << shift) * cluster_id : kMinimalIdentity;
  r.max = (std::uint64_t{1} << shift) * (std::uint64_t{cluster_id} + 1) - 1;
  return r;
}

Result<IdentityRange> resolve_identity_range(const IdentityRangeSources& s) {
  auto id = pick("cluster-id", s.flag_cluster_id, s.agent_cluster_id);
  if (!id) return std::unexpected(id.error());
  auto max =
      pick("max-connected-clusters", s.flag_max_connected_clusters, s.agent_max_connected_clusters);
  if (!max) return std::unexpected(max.error());
  return identity_range(*id, *max);
}

std::string describe(const IdentityRange& r) {
  return std::to_string(r.min) + "-" + std::to_string(r.max) + " (cluster-id " +
         std::to_string(r.cluster_id) + ", max-connected-clusters " +
         std::to_string(r.max_connected_clusters) + ")";
}

}  // namespace cn::labeler::cluster
