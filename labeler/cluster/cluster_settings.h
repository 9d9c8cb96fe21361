#pragma once
// What `run --cluster-duties` is told (README, "Cluster duties"). Durations come from Go-style
// flags (cluster_flags.h).
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "labeler/cluster/node_reaper.h"

namespace cn::labeler::cluster {

struct ClusterDutySettings {
  bool enabled = false;        // --cluster-duties: campaign, and act while leading
  std::string kvstore_config;  // --kvstore-config: the agent's etcd YAML; empty: no kvstore
  std::string cluster_name = "default";
  std::string node;  // this labeler's node name: the leader key's value, the in-use report's key
  std::chrono::milliseconds leader_lease_ttl{std::chrono::seconds{15}};
  std::chrono::milliseconds heartbeat_interval{std::chrono::minutes{1}};
  std::chrono::milliseconds identity_gc_interval{std::chrono::minutes{15}};
  std::chrono::milliseconds lock_gc_interval{std::chrono::seconds{25}};
  std::chrono::milliseconds node_reap_grace{std::chrono::minutes{5}};
  int node_reap_max_per_pass = 10;  // node entries deleted a pass; the rest wait for the next
  std::string nomad_region;         // NOMAD_REGION: the region node reaping's node list comes from
  bool heartbeat = true;
  bool identity_gc = true;
  bool lock_gc = true;
  bool node_reaping = true;
  bool cluster_config = true;  // write cilium/cluster-config/<cluster> (with a cluster ID)
  bool ip_gc = true;           // delete lease-less ipcache entries no endpoint holds (ip_gc.h)
  bool dry_run = false;
  int identity_gc_rate_limit = 2500;  // deletions a minute; 0: no limit
  // The agent's cluster-id and max-connected-clusters, which fix the identity range the GC
  // collects (identity_range.h); either unset: identity GC refuses to run.
  std::optional<std::uint32_t> cluster_id;
  std::optional<std::uint32_t> max_connected_clusters;
  NodeNameRule node_name_rule = NodeNameRule::name;
  std::chrono::milliseconds call_timeout{std::chrono::seconds{5}};
};

}  // namespace cn::labeler::cluster
