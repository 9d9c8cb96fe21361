#pragma once
// One leader per cluster for the cluster duties, elected on etcd the standard way: a lease, a
// leader key created only if absent (txn compare create_revision == 0), keep-alives every third
// of the TTL, and resignation on stop (the key deleted, the lease revoked) so that another
// labeler takes over at once instead of after a TTL.
//
// The election never trusts its own belief alone: every duty write carries the LeaderFence, so a
// leader that stalled past its TTL finds its writes refused. Locally it also stops believing it
// leads once a TTL has passed since the last keep-alive etcd confirmed, measured from when that
// keep-alive was SENT (etcd counts from when it received it, later), and it re-reads the key
// every round to notice a key deleted or replaced behind its back.
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>

#include <spdlog/fwd.h>

#include "common/etcd/etcd_api.h"
#include "common/util/backoff.h"
#include "common/util/clock.h"
#include "common/util/mutex.h"
#include "labeler/cluster/leader_fence.h"

namespace cn::labeler::cluster {

struct LeaderElectionSettings {
  std::string key;     // see leader_key()
  std::string holder;  // who this labeler is, in the key's value and in logs (its node name)
  std::chrono::seconds lease_ttl{15};
  std::chrono::milliseconds call_timeout{5'000};
  BackoffPolicy backoff{std::chrono::milliseconds{500}, std::chrono::seconds{15},
                        std::chrono::milliseconds{100}};
};

// "cilium-nomad/<cluster>/leader": outside Cilium's own `cilium/` prefix, so that an ACL can
// give the labelers this prefix without widening what they may write among Cilium's keys.
std::string leader_key(std::string_view cluster_name);

struct LeaderView {
  bool leading = false;
  std::string holder;                // the leader as last read; empty: none or not known
  std::optional<LeaderFence> fence;  // ours, while leading
  std::uint64_t terms = 0;           // how many times this labeler has become leader
  std::string last_error;            // the last etcd failure, empty once a round succeeds
};

class LeaderElection {
 public:
  using Observer = std::function<void(const LeaderView&)>;

  LeaderElection(etcd::EtcdApi& etcd, Clock& clock, LeaderElectionSettings settings,
                 std::shared_ptr<spdlog::logger> log);

  // Campaigns, keeps the lease alive and watches the key until `stop`; then resigns.
  void run(std::stop_token stop);

  LeaderView view() const EXCLUDES(mu_);
  // Requested when this term's leadership ends (lost, refused, or stop): a duty pass running
  // under the term stops at its next step.
  std::stop_token term_token() const EXCLUDES(mu_);
  // A duty's fenced write was refused because the key is no longer ours: stop leading now
  // instead of at the next round.
  void fence_refused(const LeaderFence& fence) EXCLUDES(mu_);
  // Called (on the election's thread) after every change of the view.
  void set_observer(Observer observer);

 private:
  struct Lease {
    etcd::LeaseId id = 0;
    MonoTime valid_until{};  // by our clock, conservatively
  };

  bool ensure_lease(std::stop_token stop);
  bool keep_alive(std::stop_token stop);
  void campaign(std::stop_token stop);
  void check_still_ours(std::stop_token stop);
  void resign();
  void become_leader(const LeaderFence& fence) EXCLUDES(mu_);
  void lose(std::string_view why) EXCLUDES(mu_);
  void set_holder(std::string holder, std::string error) EXCLUDES(mu_);
  std::string key_value() const;
  Deadline call_deadline(std::stop_token stop) const;
  void notify() EXCLUDES(mu_);

  etcd::EtcdApi& etcd_;
  Clock& clock_;
  LeaderElectionSettings settings_;
  std::shared_ptr<spdlog::logger> log_;
  Observer observer_;
  Lease lease_;  // only the run() thread touches it

  mutable Mutex mu_;
  LeaderView view_ GUARDED_BY(mu_);
  std::stop_source term_ GUARDED_BY(mu_);
};

}  // namespace cn::labeler::cluster
