#pragma once
// --watch node: a blocking-query loop on GET /v1/node/<node>/allocations (Node.GetAllocs in
// hashicorp/nomad nomad/node_endpoint.go). Node-scoped, so Nomad wakes us only for this node's
// allocations, and the answer embeds each Job, so the workers need no further Nomad call.
//
// Each answer is diffed by ModifyIndex: an allocation is new or changed when its ModifyIndex is
// above what we last knew of it (or, for one we do not track, above the index we asked with:
// X-Nomad-Index is the max ModifyIndex of the node's allocations, so anything changed since
// has a larger one). Changed allocations that want labels become WorkItems with the allocation
// attached.
//
// X-Nomad-Index below the index asked with is normal after garbage collection: Node.GetAllocs
// (nomad/node_endpoint.go) answers the max ModifyIndex of the allocations left, and the GC
// (StateStore.DeleteEval, nomad/state/state_store.go) deletes the newest one like any other; the
// parked query (blockingRPC, nomad/rpc.go) then answers that lower index when its wait runs out.
// The GC only deletes, so every allocation left is one the last answer showed, at the same
// ModifyIndex. The rule (explained_by_gc):
//  - every allocation of the answer is remembered at exactly its ModifyIndex, or is terminal
//    (never tracked), or nothing is remembered yet (the first answer after start, or after the
//    memory overflowed): garbage collection. No warning, no resync: the watch blocks from the
//    server's lower index, which every later write passes (Raft indexes only grow).
//  - otherwise (an allocation at another ModifyIndex than remembered, or a live one never seen):
//    the state went back in time, a snapshot restore or a rebuilt cluster counting from a lower
//    index. Every remembered index is meaningless: the watcher forgets them, asks again from
//    index 0 (a non-blocking full listing that becomes the new baseline) and requests a resync.
// A restore whose state for this node equals the memory minus some allocations looks like a GC,
// and is handled like one correctly: nothing remembered is wrong, and later writes still pass
// the lower index. Errors back off exponentially with full jitter on the injected clock.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include <spdlog/fwd.h>

#include "common/nomad/client/nomad_api.h"
#include "common/util/clock.h"
#include "labeler/labeling/alloc_cache.h"
#include "labeler/serve/call_recorder.h"
#include "labeler/serve/metrics.h"
#include "labeler/watch/watcher.h"

namespace cn::labeler {

struct NodeWatchOptions {
  // Blocking wait sent to Nomad. 300 s is Nomad's maximum (longer values are capped silently).
  std::chrono::seconds wait{300};
  // Up to wait/jitter_divisor is taken off each wait so the nodes of a cluster drift apart
  // instead of re-asking in lockstep (Nomad adds its own wait/16 on top). 0: no jitter.
  int jitter_divisor = 8;
  // Deadline of a non-blocking call; added to wait + wait/16 for a blocking one.
  std::chrono::milliseconds call_timeout{10'000};
  // An answer that changed nothing and came back sooner than this (a proxy dropping ?index=, a
  // test double) is followed by a pause, so such a server cannot make the loop spin.
  std::chrono::milliseconds min_quiet_interval{1'000};
  BackoffPolicy backoff;
  // Index of a listing already reconciled (the daemon's first reconcile): allocations up to it
  // are not re-enqueued. 0: the first answer enqueues every allocation that wants labels.
  std::uint64_t initial_index = 0;
  // Bound on the per-allocation ModifyIndex map (live allocations of one node, so normally a
  // few dozen); beyond it the oldest entries fall back to the asked-index rule.
  std::size_t max_tracked = 8192;
  std::uint64_t seed = 0;  // jitter; 0: random
  // Rebuilt from every answer (each is the node's whole listing), cleared on an index reset.
  // Null: none.
  AllocCache* cache = nullptr;
};

class NodeWatcher final : public Watcher {
 public:
  explicit NodeWatcher(WatcherDeps deps, NodeWatchOptions options = {});

  void run(std::stop_token stop) override;
  std::string_view mode() const override { return "node"; }

  // The index the next query asks with (for tests and logs).
  std::uint64_t index() const { return index_.load(); }

 private:
  std::chrono::seconds next_wait();
  // Diffs one answer against what we knew. `baseline`: remember only, enqueue nothing.
  void apply(const nomad::AllocationList& list, std::uint64_t asked, bool baseline);
  // An answer below the asked index: whether the GC alone can explain it (see the top).
  bool explained_by_gc(const nomad::AllocationList& list) const;

  WatcherDeps deps_;
  NodeWatchOptions options_;
  BackoffJitter jitter_;  // the reconnect backoff's and the waits'

  std::atomic<std::uint64_t> index_;
  std::map<std::string, std::uint64_t> known_;  // live alloc ID -> ModifyIndex last seen
  // Every allocation of the last answer, terminal ones too: whose Job the next answer need not
  // decode again (same ModifyIndex). `answer` tells this answer's entries from the gone ones.
  struct Listed {
    std::uint64_t modify_index;
    std::uint64_t answer;
  };
  std::map<std::string, Listed, std::less<>> listed_;
  std::uint64_t answers_ = 0;
  // known_ holds every live allocation of the last answer (false before the first answer and
  // after the max_tracked bound dropped some): only then is a live unknown one evidence.
  bool known_complete_ = false;
  bool rebaseline_ = false;  // after an index reset: the next (index 0) answer is a baseline
};

}  // namespace cn::labeler
