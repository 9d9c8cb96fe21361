#pragma once
// One cluster duty as the runner sees it: a pass, run on a schedule while this labeler leads.
// The duties (heartbeat, identity GC, lock GC, node reaping, cluster config, IP GC) adapt their own
// classes to this.
#include <chrono>
#include <stop_token>
#include <string>
#include <string_view>

#include "labeler/cluster/duty_pass.h"
#include "labeler/cluster/leader_fence.h"

namespace cn::labeler::cluster {

enum class DutyName { heartbeat, identity_gc, lock_gc, node_reaping, cluster_config, ip_gc };
inline constexpr DutyName kAllDutyNames[] = {DutyName::heartbeat,      DutyName::identity_gc,
                                             DutyName::lock_gc,        DutyName::node_reaping,
                                             DutyName::cluster_config, DutyName::ip_gc};
// Whether a duty deletes keys at all (its deletion series exist only then).
constexpr bool deletes_keys(DutyName duty) {
  return duty != DutyName::heartbeat && duty != DutyName::cluster_config;
}
std::string_view to_string(DutyName name);

inline constexpr PassEnd kAllPassEnds[] = {PassEnd::complete,     PassEnd::read_failed,
                                           PassEnd::doubt,        PassEnd::fence_lost,
                                           PassEnd::write_failed, PassEnd::stopped};

// cilium_nomad_cluster_duty_skips_total{duty,reason}: what a duty left alone, and why.
enum class SkipReason {
  unknown_shape,  // a key or value not in the format the agent writes
  changed,        // etcd refused the delete: the key changed since it was read
  doubt,          // a pass decided nothing: a partial read, a bad report, a doubtful Nomad list
  never_listed,   // node reaping, IP GC: a node this Nomad region never listed, so not ours
  over_cap,       // node reaping, IP GC: due, left for the next pass by the per-pass cap
  not_ours,       // cluster config: the key holds another writer's value, left alone
};
inline constexpr SkipReason kAllSkipReasons[] = {
    SkipReason::unknown_shape, SkipReason::changed,  SkipReason::doubt,
    SkipReason::never_listed,  SkipReason::over_cap, SkipReason::not_ours};
// Whether a duty can skip for that reason at all (its series exist only then).
constexpr bool skips_for(DutyName duty, SkipReason reason) {
  switch (reason) {
    case SkipReason::never_listed:
    case SkipReason::over_cap:
      return duty == DutyName::node_reaping || duty == DutyName::ip_gc;
    case SkipReason::not_ours:
      return duty == DutyName::cluster_config;
    case SkipReason::changed:
      return duty != DutyName::heartbeat;
    case SkipReason::unknown_shape:
    case SkipReason::doubt:
      return deletes_keys(duty);
  }
  return false;
}
std::string_view to_string(SkipReason reason);

struct PassOutcome {
  PassEnd end = PassEnd::complete;
  long long deleted = 0;        // keys deleted (dry run: that would have been)
  long long unknown_shape = 0;  // see SkipReason
  long long changed = 0;
  long long never_listed = 0;
  long long over_cap = 0;
  long long not_ours = 0;
};

class Duty {
 public:
  virtual ~Duty() = default;
  virtual DutyName name() const = 0;
  virtual std::chrono::milliseconds interval() const = 0;
  // `stop` is requested on shutdown and when this term's leadership ends. PassEnd::fence_lost
  // ends the term at once; any end but complete retries the pass sooner than its interval.
  virtual PassOutcome run_pass(const LeaderFence& fence, std::stop_token stop) = 0;
};

}  // namespace cn::labeler::cluster
