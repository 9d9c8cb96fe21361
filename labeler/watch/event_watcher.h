#pragma once
// --watch events: GET /v1/event/stream?topic=Allocation&namespace=*&index=<last+1>
// (command/agent/event_endpoint.go in hashicorp/nomad).
//
//  - Explicit topic=Allocation (never "all topics", which needs a management token).
//  - Every node receives every allocation event of the cluster (NodeID is not a filter key), so
//    events are filtered here: AllocationUpdated and PlanResult of THIS node whose allocation has
//    an address and is not terminal.
//  - Dedup: an event whose ModifyIndex is <= the one already seen for that allocation is
//    skipped. Labels come from the job, group and namespace, which cannot change during an
//    allocation's life (meta changes are destructive updates), so an allocation is enqueued once
//    per address it reports, not once per client update: a health update or restart costs
//    nothing.
//  - A frame at or below the last index handled is a replay or a restore. Event.Stream subscribes
//    with StartAtClosest, never StartExactlyAtIndex (nomad/stream/event_broker.go Subscribe):
//    asked for an index past its newest frame, the buffer hands out that newest frame and then
//    only newer ones (nomad/stream/event_buffer.go StartAtClosest). A server holding our last
//    frame thus replays exactly that frame, once, first; before any frame was handled, the replay
//    is its newest frame at or below the daemon's reconcile index, which the reconcile covered.
//    Such a first frame is already seen: skipped, no warning, no resync (is_replay). Any other
//    frame at or below the last index comes from a Raft log younger than what we handled: a
//    snapshot restored into a new cluster, or a rebuilt one counting from a lower index (a
//    restore into the running cluster continues above the current index, hashicorp/raft's
//    Restore, and closes every subscription, nomad/fsm.go Restore -> StateStore.Abandon, so the
//    reconnect's resync covers it). Then the dedup memory is dropped, the frame is used and a
//    resync follows. A follower that has not yet applied our last frame looks the same and gets
//    the same treatment: one needless resync, nothing missed.
//  - Job cache: none. Event payloads carry no Job and no JobModifyIndex, so a cache keyed by
//    (namespace, job, JobModifyIndex) could never be looked up from an event; WorkItems go out
//    without `alloc` and the worker makes one GET /v1/allocation/:id (which embeds the exact job
//    version the allocation runs). That is one call per allocation start on this node.
//  - The stream is dead on EOF, on an error, on a line that is not JSON (a decoder cannot find
//    the next frame inside a broken one: close and reconnect, never skip in place), and after
//    idle_timeout without a byte (Nomad heartbeats every 30 s). A stream that ends before any line
//    (Nomad >= 1.11.2 answers a denied subscription with 200 + EOF) is an error like any other.
//    Reconnects back off with full jitter on the injected clock; the backoff resets only after a
//    healthy stream.
//  - Resume at last index + 1, then a full resync once the new stream's first line arrived:
//    Nomad's buffer is small and skips silently when the index fell out of it.
//  - Periodic resubscribe (namespace=* is expanded once at subscribe time, so namespaces
//    created later would never be delivered), followed by the same resync.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include <spdlog/fwd.h>

#include "common/nomad/client/nomad_api.h"
#include "common/nomad/model/event_frame.h"
#include "common/util/clock.h"
#include "labeler/labeling/alloc_cache.h"
#include "labeler/serve/call_recorder.h"
#include "labeler/serve/metrics.h"
#include "labeler/watch/watcher.h"

namespace cn::labeler {

struct EventWatchOptions {
  std::string nomad_namespace = "*";
  // Nomad sends a heartbeat line every 30 s: 45 s of silence is a dead stream.
  std::chrono::milliseconds idle_timeout{45'000};
  std::chrono::milliseconds resubscribe_every{std::chrono::minutes{10}};
  BackoffPolicy backoff;
  // A stream that lived this long (or delivered a frame) was healthy: the next reconnect starts
  // the backoff from the beginning.
  std::chrono::milliseconds healthy_after{30'000};
  // Last Raft index already reconciled (the daemon's first reconcile); the stream starts after it.
  std::uint64_t initial_index = 0;
  // Bound on the per-allocation dedup map (this node's allocations only; terminal ones leave it).
  std::size_t max_tracked = 4096;
  std::uint64_t seed = 0;  // jitter; 0: random
  // Invalidated by every event of a changed allocation (payloads carry no Job); filled by the
  // workers' GETs and the reconcile. Null: none.
  AllocCache* cache = nullptr;
};

class EventWatcher final : public Watcher {
 public:
  explicit EventWatcher(WatcherDeps deps, EventWatchOptions options = {});

  void run(std::stop_token stop) override;
  std::string_view mode() const override { return "events"; }

  // Highest frame index handled; the next stream asks for the one after it. Readable from any
  // thread.
  std::uint64_t last_index() const { return last_index_.load(); }
  // Size of the dedup map; read it only once run() returned.
  std::size_t tracked() const { return seen_.size(); }

 private:
  struct Session {
    MonoTime opened_at{};
    std::uint64_t min_index = 0;  // the index asked for
    bool got_line = false;        // any well-formed line: the subscription is live
    int frames = 0;
    bool resubscribe = false;    // ended by us, on schedule
    std::optional<Error> error;  // ended by us, on a bad line
  };
  struct Seen {
    std::uint64_t modify_index = 0;
    std::string enqueued;  // address (and interface) last handed to the queue
  };

  bool on_line(Session& s, std::string_view line);
  void on_frame(Session& s, const nomad::EventFrame& frame);
  // A subscription's first frame at or below the last index: the server's StartAtClosest replay.
  bool is_replay(const Session& s, std::uint64_t frame_index) const;
  void on_event(const nomad::Event& event);
  void remember(const std::string& alloc_id, std::uint64_t modify_index);

  WatcherDeps deps_;
  EventWatchOptions options_;
  BackoffJitter jitter_;  // the reconnect backoff's

  // Written only by run()'s thread (the stream calls on_line on it).
  std::atomic<std::uint64_t> last_index_;
  // Index of the last frame handled; 0 until the first (last_index_ is the reconcile's until then).
  std::uint64_t last_frame_ = 0;
  bool resync_pending_ = false;
  std::map<std::string, Seen> seen_;
};

}  // namespace cn::labeler
