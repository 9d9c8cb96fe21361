#pragma once
// Stale allocator locks, collected the way cilium-operator's kvstore watchdog does
// (operator/cmd/kvstore_watchdog.go, allocator RunLocksGC in pkg/kvstore/allocator): agents
// take etcd mutexes under `cilium/state/identities/v1/locks/` on a 25 s lock lease; an agent
// that stalls while holding one blocks every allocation of that label set. Each round:
//   - of the locks the previous round saw, only the oldest (lowest ModRevision) of each mutex is
//     kept: the holder; the keys queued behind it are waiters, not stale;
//   - a lock key still there with the same ModRevision and lease as that holder was last round
//     is deleted, in a txn with that compare plus the leader fence;
//   - every other lock key is remembered for the next round.
// The operator runs a round every 25 s (defaults.LockLeaseTTL; operator/pkg/kvstore/locksweeper
// in 1.19). Unlike the operator, a round
// whose read fails or is cut short deletes nothing and keeps the previous memory as it was.
#include <cstdint>
#include <map>
#include <memory>
#include <stop_token>
#include <string>

#include <spdlog/fwd.h>

#include "common/etcd/etcd_api.h"
#include "common/util/clock.h"
#include "labeler/cluster/duty_skeleton.h"
#include "labeler/cluster/leader_fence.h"
#include "labeler/cluster/paged_scan.h"

namespace cn::labeler::cluster {

struct LockGcOptions {
  ScanSettings scan;
  bool dry_run = false;
};

struct LockGcReport : DutyReport {
  // scanned: lock keys read
  std::int64_t stale = 0;  // held unchanged since the previous round by a mutex's holder
};

class LockGc {
 public:
  LockGc(etcd::EtcdApi& etcd, Clock& clock, LockGcOptions options,
         std::shared_ptr<spdlog::logger> log = nullptr);

  LockGcReport run_pass(const LeaderFence& fence, std::stop_token stop);

  void forget() { previous_.clear(); }
  std::size_t remembered() const { return previous_.size(); }

 private:
  class Pass;  // one round as a policy over the duty skeleton (lock_gc.cpp)
  struct Seen {
    etcd::Revision mod_revision = 0;
    etcd::LeaseId lease = 0;
  };

  // The previous round's locks reduced to the oldest of each mutex.
  std::map<std::string, Seen> holders_of_previous() const;

  etcd::EtcdApi& etcd_;
  Clock& clock_;
  LockGcOptions options_;
  std::shared_ptr<spdlog::logger> log_;
  // Lock key -> as the last complete round saw it. Bounded by the locks held at once.
  std::map<std::string, Seen> previous_;
};

}  // namespace cn::labeler::cluster
