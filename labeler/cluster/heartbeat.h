#pragma once
// `cilium/.heartbeat`, which cilium-operator's kvstore watchdog writes every minute
// (operator/cmd/kvstore_watchdog.go in 1.16-1.17, pkg/kvstore/heartbeat in 1.18+;
// kvstore.HeartbeatWriteInterval) and agents watch. The operator writes
// `time.Now().Format(time.RFC3339)` under its session lease; agents never parse the value, a
// create or modify counts. Agents 1.16-1.18 fail their kvstore status (and /healthz) about 3 min
// after the last write, a never-written key included; 1.19 agents no longer judge it on their own
// kvstore connection (cilium PR #40920), only clustermesh peers reading this etcd do. We write the
// same format in UTC
// (`2026-12-02T03:04:05Z`, whole seconds, as Go prints it) as a fenced put under the lease the
// runner passes, so the key expires with the leader that wrote it.
#include <cstdint>
#include <memory>
#include <stop_token>
#include <string>

#include <spdlog/fwd.h>

#include "common/etcd/etcd_api.h"
#include "common/util/clock.h"
#include "labeler/cluster/duty_pass.h"
#include "labeler/cluster/leader_fence.h"

namespace cn::labeler::cluster {

// Go's time.RFC3339 layout of a UTC time: no fraction, "Z".
std::string heartbeat_value(WallTime t);

struct HeartbeatOptions {
  std::chrono::milliseconds call_timeout{10'000};
  bool dry_run = false;  // log the value, write nothing
};

struct HeartbeatReport {
  PassEnd end = PassEnd::complete;  // complete, fence_lost, write_failed or stopped
  std::string detail;
  bool written = false;
  std::string value;            // what was (or would have been) written
  etcd::Revision revision = 0;  // the store's revision after the write
  std::int64_t etcd_requests = 0;
};

class HeartbeatWriter {
 public:
  HeartbeatWriter(etcd::EtcdApi& etcd, Clock& clock, HeartbeatOptions options,
                  std::shared_ptr<spdlog::logger> log = nullptr);

  // One write; `lease` is the one the key lives under (the leader's).
  HeartbeatReport write(const LeaderFence& fence, etcd::LeaseId lease, std::stop_token stop);

 private:
  etcd::EtcdApi& etcd_;
  Clock& clock_;
  HeartbeatOptions options_;
  std::shared_ptr<spdlog::logger> log_;
};

}  // namespace cn::labeler::cluster
