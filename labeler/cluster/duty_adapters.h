#pragma once
// The duties as the runner runs them (duty.h): each wraps its class, turns its report into
// the pass's outcome and metrics, and logs it in one line.
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <spdlog/fwd.h>

#include "common/etcd/etcd_api.h"
#include "common/nomad/client/nomad_api.h"
#include "common/util/clock.h"
#include "labeler/cluster/cluster_settings.h"
#include "labeler/cluster/duty.h"
#include "labeler/serve/metrics.h"

namespace cn::labeler::cluster {

// Everything a duty needs from outside, shared by them all.
struct DutyContext {
  etcd::EtcdApi& etcd;
  nomad::NomadApi& nomad;
  Clock& clock;
  Metrics& metrics;
  std::shared_ptr<spdlog::logger> log;
  // This node's Nomad node ID (node reaping doubts a node list without it), as the daemon found
  // it at start-up (labeler/daemon/node_identity.h): asking Nomad again would need agent read.
  std::function<std::string()> node_id;
};

std::unique_ptr<Duty> make_heartbeat_duty(const ClusterDutySettings& settings,
                                          const DutyContext& ctx);
std::unique_ptr<Duty> make_identity_gc_duty(const ClusterDutySettings& settings,
                                            const DutyContext& ctx);
std::unique_ptr<Duty> make_lock_gc_duty(const ClusterDutySettings& settings,
                                        const DutyContext& ctx);
std::unique_ptr<Duty> make_node_reaping_duty(const ClusterDutySettings& settings, DutyContext ctx);
// Reads Nomad's node list each pass, as node reaping does.
std::unique_ptr<Duty> make_ip_gc_duty(const ClusterDutySettings& settings, DutyContext ctx);
std::unique_ptr<Duty> make_cluster_config_duty(const ClusterDutySettings& settings,
                                               const DutyContext& ctx);

}  // namespace cn::labeler::cluster
