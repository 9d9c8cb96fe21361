#pragma once
// The cluster side of `run` with --kvstore-config: this node's in-use identity report always,
// and with --cluster-duties the leader election and the duties it runs while leading.
#include <functional>
#include <memory>
#include <stop_token>
#include <string>
#include <thread>

#include <spdlog/fwd.h>

#include "common/cilium/client/cilium_api.h"
#include "common/etcd/etcd_api.h"
#include "common/nomad/client/nomad_api.h"
#include "common/util/clock.h"
#include "labeler/cluster/cluster_settings.h"
#include "labeler/cluster/duty_runner.h"
#include "labeler/cluster/in_use_reporter.h"
#include "labeler/cluster/leader_election.h"
#include "labeler/serve/metrics.h"

namespace cn::labeler::cluster {

class ClusterDuties {
 public:
  // `node_id`: this node's Nomad node ID, as the labeler daemon found it; read when a duty
  // needs it, so the duties must start after the daemon.
  ClusterDuties(const ClusterDutySettings& settings, etcd::EtcdApi& etcd, cilium::CiliumApi& cilium,
                nomad::NomadApi& nomad, Clock& clock, Metrics& metrics,
                std::shared_ptr<spdlog::logger> log, std::function<std::string()> node_id);
  ~ClusterDuties();
  ClusterDuties(const ClusterDuties&) = delete;
  ClusterDuties& operator=(const ClusterDuties&) = delete;

  void start(std::stop_token stop);
  // Returns once every thread has ended; the leader has resigned by then.
  void join();

  // For /healthz: "cluster duties: leader=<holder> (this labeler)\n", or the follower's view.
  std::string health_detail() const;
  const LeaderElection* election() const { return election_.get(); }

 private:
  ClusterDutySettings settings_;
  Metrics& metrics_;
  std::shared_ptr<spdlog::logger> log_;
  InUseReporter reporter_;
  std::unique_ptr<LeaderElection> election_;
  std::unique_ptr<DutyRunner> runner_;
  std::jthread reporter_thread_;
  std::jthread election_thread_;
};

}  // namespace cn::labeler::cluster
