#pragma once
// The deletes of the cluster duties (duty_skeleton.h): confirmed keys deleted in fenced txns of up
// to `per_txn` deletions, each under the rate limit, all or none in one txn. A batch etcd refuses
// with the fence intact (one key changed or gained a user since the read) is retried one
// deletion a txn, so one changed key never keeps the others. A lost fence or a write without an
// answer ends the pass at once.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <stop_token>
#include <string>
#include <vector>

#include "common/etcd/etcd_api.h"
#include "common/util/clock.h"
#include "labeler/cluster/delete_rate_limiter.h"
#include "labeler/cluster/duty_pass.h"
#include "labeler/cluster/leader_fence.h"

namespace cn::labeler::cluster {

struct FencedDeletion {
  std::string key;
  // The duty's own compares for this key (its ModRevision as read, and what else must hold);
  // the fence comes first in every txn.
  std::vector<etcd::Compare> compares;
  // Keys deleted in the same txn under the same compares (node reaping: the entry's marker).
  std::vector<std::string> also_delete;
};

struct FencedDeleteSettings {
  std::size_t per_txn = 50;  // at least 1; etcd refuses more than 128 compares a txn
  std::chrono::milliseconds call_timeout{10'000};
};

struct FencedDeleteResult {
  PassEnd end = PassEnd::complete;
  std::string detail;
  std::int64_t requests = 0;  // txns sent
  std::int64_t refused = 0;   // deletions etcd refused one by one, plus a lost fence
};

// `on_done(index, applied)`: called once per deletion that was applied (true) or refused on its
// own (false); deletions the pass never reached get no call.
FencedDeleteResult delete_fenced(etcd::EtcdApi& etcd, Clock& clock, DeleteRateLimiter& limiter,
                                 const LeaderFence& fence, std::span<const FencedDeletion> all,
                                 const FencedDeleteSettings& settings, const std::stop_token& stop,
                                 const std::function<void(std::size_t, bool)>& on_done);

}  // namespace cn::labeler::cluster
