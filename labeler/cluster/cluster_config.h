#pragma once
// `cilium/cluster-config/<cluster>`, which a ClusterMesh peer reads when it connects to this
// cluster's etcd: since cilium 1.16 (cilium PR #32505, pkg/clustermesh/common/remote_cluster.go,
// getClusterConfig) a peer that does not find it retries for 3 minutes and then drops the
// connection and starts over, so it never connects. In Kubernetes clustermesh-apiserver (and
// kvstoremesh for the clusters it caches) writes it on its lease and re-writes it every 5 minutes
// (pkg/clustermesh/utils/clustercfg.go, EnforceClusterConfig). Without Kubernetes nobody does, so
// the leader writes it:
//   value: {"id":<cluster ID>,"capabilities":{"maxConnectedClusters":<max>}}
// the JSON of cmtypes.CiliumClusterConfig (pkg/clustermesh/types/types.go) as Go prints it, and
// nothing more: `syncedCanaries` would make peers wait for `cilium/synced/...` canaries that only
// clustermesh-apiserver writes, and `cached` would send them to `cilium/cache/` prefixes.
//
// Each pass reads the key and writes it, fenced, on the leader lease, only if it is absent or
// already holds exactly our value (moved onto our lease). A different value on a lease that is
// not ours belongs to someone else (a real clustermesh-apiserver or kvstoremesh): it is left
// alone, logged once and counted. No cluster ID (unset or 0: no ClusterMesh): nothing is
// written, said once in the log.
#include <cstdint>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>

#include <spdlog/fwd.h>

#include "common/etcd/etcd_api.h"
#include "common/util/clock.h"
#include "labeler/cluster/duty_pass.h"
#include "labeler/cluster/leader_fence.h"

namespace cn::labeler::cluster {

// Upstream's enforcement interval (clustercfg.go runInterval): a deleted or expired key is
// back within it.
inline constexpr std::chrono::minutes kClusterConfigInterval{5};

// `cilium/cluster-config/<cluster>` (kvstore.ClusterConfigPrefix).
std::string cluster_config_key(std::string_view cluster);
// Byte for byte what encoding/json prints for CiliumClusterConfig{ID: id, Capabilities:
// {MaxConnectedClusters: max}}: fields in declaration order, the empty ones omitted.
std::string cluster_config_value(std::uint32_t cluster_id, std::uint32_t max_connected_clusters);

struct ClusterConfigOptions {
  std::string cluster_name = "default";
  // The agent's --cluster-id and --max-connected-clusters; no cluster ID, or 0: nothing written.
  std::optional<std::uint32_t> cluster_id;
  std::optional<std::uint32_t> max_connected_clusters;
  std::chrono::milliseconds call_timeout{10'000};
  bool dry_run = false;  // log what would be written, write nothing
};

enum class ClusterConfigAction {
  none,         // no cluster ID, or the pair is not one the agent accepts: nothing to write
  kept,         // our value, on our lease already
  written,      // created, or our value moved onto our lease
  would_write,  // dry run
  not_ours,     // another value on another lease: left alone
  changed,      // etcd refused the write: the key changed between the read and the write
};

struct ClusterConfigReport {
  PassEnd end = PassEnd::complete;
  std::string detail;
  ClusterConfigAction action = ClusterConfigAction::none;
  std::string value;  // what we write (empty with no cluster ID)
  std::int64_t etcd_requests = 0;
};

class ClusterConfigWriter {
 public:
  ClusterConfigWriter(etcd::EtcdApi& etcd, Clock& clock, ClusterConfigOptions options,
                      std::shared_ptr<spdlog::logger> log = nullptr);

  ClusterConfigReport run_pass(const LeaderFence& fence, std::stop_token stop);

 private:
  etcd::EtcdApi& etcd_;
  Clock& clock_;
  ClusterConfigOptions options_;
  std::shared_ptr<spdlog::logger> log_;
  std::string key_;
  std::string value_;  // empty: nothing to write (why_not_ says why)
  std::string why_not_;
  bool why_not_logged_ = false;
  std::string foreign_logged_;  // the other writer's value last logged: each one logged once
};

}  // namespace cn::labeler::cluster
