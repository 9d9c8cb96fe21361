#pragma once
// The flags of `run` that configure the cluster duties, kept out of main.cpp. Durations are read
// as Go durations after parsing, so that an error names the flag and the text.
#include <string>

#include <CLI/CLI.hpp>

#include "common/util/result.h"
#include "labeler/cluster/cluster_settings.h"

namespace cn::labeler::cluster {

struct ClusterDutyFlags {
  ClusterDutySettings settings;
  std::string leader_lease_ttl = "15s";
  std::string heartbeat_interval = "1m";
  std::string identity_gc_interval = "15m";
  std::string lock_gc_interval = "25s";
  std::string node_reap_grace = "5m";
};

void add_cluster_duty_options(CLI::App* cmd, ClusterDutyFlags& flags);

// The settings, with the durations read and the combinations checked; `cluster_name` is the
// labeler's --cluster-name.
[[nodiscard]] Result<ClusterDutySettings> cluster_duty_settings(const ClusterDutyFlags& flags,
                                                                const std::string& cluster_name);

}  // namespace cn::labeler::cluster
