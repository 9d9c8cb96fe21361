#include "labeler/cluster/fenced_deletes.h"

#include <algorithm>

#include "labeler/cluster/fenced_txn.h"

namespace cn::labeler::cluster {
namespace {

// One txn deleting every key of [begin, end), all or none. False when the pass must end.
bool fenced_delete_batch(etcd::EtcdApi& etcd, Clock& clock, const LeaderFence& fence,
                         std::span<const FencedDeletion> all, std::size_t begin, std::size_t end,
                         const FencedDeleteSettings& settings, const std::stop_token& stop,
                         const std::function<void(std::size_t, bool)>& on_done,
                         FencedDeleteResult& result, bool& refused) {
  refused = false;
  std::vector<etcd::Compare> own;
  std::vector<etcd::TxnOp> ops;
  ops.reserve(end - begin);
  for (std::size_t i = begin; i < end; ++i) {
    own.insert(own.end(), all[i].compares.begin(), all[i].compares.end());
    ops.push_back(delete_key_op(all[i].key));
    for (const auto& key : all[i].also_delete) ops.push_back(delete_key_op(key));
  }
  ++result.requests;
  auto outcome = run_fenced(etcd, fence, std::move(own), std::move(ops),
                            Deadline(clock.now() + settings.call_timeout, stop));
  if (!outcome || *outcome == FencedOutcome::fence_lost) {
    if (outcome) ++result.refused;
    auto [stop_end, detail] = write_stop(outcome);
    result.end = stop_end;
    result.detail = std::move(detail);
    return false;
  }
  if (*outcome == FencedOutcome::applied) {
    for (std::size_t i = begin; i < end; ++i) on_done(i, true);
    return true;
  }
  refused = true;
  if (end - begin == 1) {
    ++result.refused;
    on_done(begin, false);
  }
  return true;
}

}  // namespace

FencedDeleteResult delete_fenced(etcd::EtcdApi& etcd, Clock& clock, DeleteRateLimiter& limiter,
                                 const LeaderFence& fence, std::span<const FencedDeletion> all,
                                 const FencedDeleteSettings& settings, const std::stop_token& stop,
                                 const std::function<void(std::size_t, bool)>& on_done) {
  FencedDeleteResult result;
  const std::size_t per_txn = std::max<std::size_t>(settings.per_txn, 1);
  std::size_t next = 0;
  while (next < all.size()) {
    // Every deletion takes its token first; what the limiter grants without waiting goes in
    // one txn, so a paced pass never holds granted deletions back while it waits.
    const std::size_t begin = next;
    do {
      if (!limiter.acquire(stop)) {
        result.end = PassEnd::stopped;
        result.detail = "stopped while rate limited";
        return result;
      }
      ++next;
    } while (next < all.size() && next - begin < per_txn && limiter.available() > 0);
    bool refused = false;
    if (!fenced_delete_batch(etcd, clock, fence, all, begin, next, settings, stop, on_done, result,
                             refused))
      return result;
    if (!refused || next - begin == 1) continue;
    // One of them changed since the read: find which, one txn each; the tokens were taken.
    for (std::size_t k = begin; k < next; ++k) {
      if (!fenced_delete_batch(etcd, clock, fence, all, k, k + 1, settings, stop, on_done, result,
                               refused))
        return result;
    }
  }
  return result;
}

}  // namespace cn::labeler::cluster
