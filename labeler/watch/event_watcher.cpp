#include "labeler/watch/event_watcher.h"

#include <algorithm>
#include <variant>

#include <spdlog/spdlog.h>

namespace cn::labeler {

namespace {

constexpr std::string_view kAllocationTopic = "Allocation";

}  // namespace

EventWatcher::EventWatcher(WatcherDeps deps, EventWatchOptions options)
    : deps_(std::move(deps)),
      options_(std::move(options)),
      jitter_(BackoffJitter::seed_or_random(options_.seed)),
      last_index_(options_.initial_index) {
  if (!deps_.log) deps_.log = spdlog::default_logger();
}

void EventWatcher::run(std::stop_token stop) {
  deps_.log->info("event watch started: node={} namespace={} index={}", deps_.node_id,
                  options_.nomad_namespace, last_index_.load());
  BackoffStrategy backoff(options_.backoff, jitter_);
  while (!stop.stop_requested()) {
    Session s;
    s.opened_at = deps_.clock.now();
    nomad::EventStreamQuery query;
    query.topic = std::string(kAllocationTopic);
    query.nomad_namespace = options_.nomad_namespace;
    // Nomad's index is inclusive: ask for the first one we have not seen.
    query.index = last_index_ + 1;
    s.min_index = query.index;
    auto status = deps_.nomad.event_stream(
        query, [&](std::string_view line) { return !stop.stop_requested() && on_line(s, line); },
        options_.idle_timeout, stop);
    if (stop.stop_requested()) break;
    // A stream that delivered a line reached Nomad, whatever ended it later.
    if (s.got_line || status) {
      deps_.calls.record(Peer::nomad, nullptr);
    } else {
      deps_.calls.record(Peer::nomad, &status.error());
    }

    // Whatever ended this stream, the next one must be followed by a resync: events may have
    // fallen out of Nomad's buffer in between, and a resubscribe may add namespaces.
    resync_pending_ = true;
    deps_.metrics.watch_reconnects(WatchMode::kEvents).Increment();
    if (s.resubscribe) {
      backoff.reset();
      deps_.log->info("event stream resubscribing on schedule: node={} resume_index={}",
                      deps_.node_id, last_index_.load() + 1);
      continue;
    }

    Error error = s.error ? *s.error
                          : (!status ? status.error()
                                     : Error{ErrorKind::transport,
                                             "event stream ended without being asked to", 0, 0});
    const ErrorKindLabel kind = s.error      ? ErrorKindLabel::nomad_stream_bad_line
                                : s.got_line ? ErrorKindLabel::nomad_stream
                                             : ErrorKindLabel::nomad_stream_open;
    const bool healthy =
        s.got_line && !s.error &&
        (s.frames > 0 || deps_.clock.now() - s.opened_at >= options_.healthy_after);
    if (healthy) backoff.reset();
    deps_.metrics.errors(kind).Increment();
    auto delay = backoff.next_delay();
    if (!s.got_line) {
      // A denied subscription on Nomad >= 1.11.2 looks exactly like this (200, then EOF).
      deps_.log->warn(
          "event stream ended before its first heartbeat (denied?), retrying: node={} kind={} "
          "error=\"{}\" "
          "attempt={} retry_ms={}{}",
          deps_.node_id, to_string(error.kind), error.message, backoff.retries(), delay.count(),
          remedy_note(error));
    } else {
      deps_.log->warn(
          "event stream broken, reconnecting: node={} kind={} error=\"{}\" frames={} "
          "resume_index={} "
          "attempt={} retry_ms={}{}",
          deps_.node_id, to_string(error.kind), error.message, s.frames, last_index_.load() + 1,
          backoff.retries(), delay.count(), remedy_note(error));
    }
    if (!deps_.clock.sleep_for(delay, stop)) break;
  }
  deps_.log->info("event watch stopped: node={} index={}", deps_.node_id, last_index_.load());
}

bool EventWatcher::on_line(Session& s, std::string_view line) {
  auto message = nomad::parse_event_frame(line);
  if (!message) {
    // A decoder cannot resynchronise inside a broken stream: end it here
    // and reconnect at the last good index.
    s.error = Error{ErrorKind::bad_answer, "unusable event stream line: " + message.error().message,
                    0, 0};
    return false;
  }
  if (!s.got_line) {
    // Nomad sends "{}" first; any well-formed line proves the subscription is live, though, and
    // refusing a frame that came first would only turn a harmless ordering into a reconnect loop.
    s.got_line = true;
    if (resync_pending_) {
      resync_pending_ = false;
      deps_.log->info("event stream reopened, resyncing: node={} index={}", deps_.node_id,
                      s.min_index);
      deps_.resync();
    }
  }
  if (auto* frame = std::get_if<nomad::EventFrame>(&*message)) on_frame(s, *frame);
  // Heartbeats arrive every 30 s, so this check runs at least that often.
  if (deps_.clock.now() - s.opened_at >= options_.resubscribe_every) {
    s.resubscribe = true;
    return false;
  }
  return true;
}

void EventWatcher::on_frame(Session& s, const nomad::EventFrame& frame) {
  ++s.frames;
  const std::uint64_t last = last_index_.load();
  bool reset = false;
  if (frame.index <= last) {
    if (is_replay(s, frame.index)) {
      deps_.log->debug("event stream: replayed frame already seen: node={} index={} last={}",
                       deps_.node_id, frame.index, last);
      return;
    }
    // A younger Raft log (see the header). Skipping its frames would skip every event until the
    // index climbs back, and the per-allocation ModifyIndex memory would refuse updates of
    // existing allocations too.
    reset = true;
    deps_.metrics.errors(ErrorKindLabel::nomad_index_reset).Increment();
    deps_.log->warn(
        "nomad index went backwards (servers restored?), forgetting what was seen and resyncing: "
        "node={} "
        "last={} got={}",
        deps_.node_id, last, frame.index);
    seen_.clear();
    last_index_ = frame.index;
  }
  for (const auto& event : frame.events) on_event(event);
  if (frame.index > last_index_.load()) last_index_ = frame.index;
  last_frame_ = frame.index;
  // After this frame's events, so that anything between the restore and now is caught by the
  // resync and nothing after it is missed by the stream.
  if (reset) deps_.resync();
}

bool EventWatcher::is_replay(const Session& s, std::uint64_t frame_index) const {
  if (s.frames != 1) return false;  // StartAtClosest hands out one older frame, the first
  return last_frame_ == 0 ? frame_index <= last_index_.load() : frame_index == last_frame_;
}

void EventWatcher::on_event(const nomad::Event& event) {
  if (event.topic != kAllocationTopic) return;
  if (event.type != "AllocationUpdated" && event.type != "PlanResult") return;
  if (event.payload_error) {
    deps_.metrics.errors(ErrorKindLabel::nomad_event_payload).Increment();
    deps_.log->warn("event stream: unusable allocation payload: key={} index={} error=\"{}\"",
                    event.key, event.index, event.payload_error->message);
    return;
  }
  if (!event.allocation) return;
  const nomad::Allocation& alloc = *event.allocation;
  if (alloc.node_id != deps_.node_id) return;

  const std::uint64_t modify_index = alloc.modify_index != 0 ? alloc.modify_index : event.index;
  auto it = seen_.find(alloc.id);
  if (it != seen_.end() && modify_index <= it->second.modify_index) {
    deps_.log->debug("event stream: already seen: alloc={} modify_index={} seen={}", alloc.id,
                     modify_index, it->second.modify_index);
    return;
  }
  if (options_.cache) options_.cache->observe(alloc);
  if (alloc.is_terminal()) {
    // Never needs labels again; forgetting it keeps the map to this node's live allocations.
    if (it != seen_.end()) seen_.erase(it);
    return;
  }
  remember(alloc.id, modify_index);
  if (!wants_labels(alloc)) return;

  WorkItem item = watch_work_item(alloc, false);
  std::string key = item.ifname;
  for (const auto& ip : item.ips) key += "," + ip;
  Seen& seen = seen_[alloc.id];
  if (seen.enqueued == key) return;  // same endpoint, same labels: nothing to do
  if (deps_.enqueue(std::move(item))) {
    seen.enqueued = std::move(key);
    deps_.log->debug("event stream: enqueued alloc={} type={} modify_index={}", alloc.id,
                     event.type, modify_index);
  } else {
    // Not remembered as enqueued, so the allocation's next event tries again.
    deps_.metrics.errors(ErrorKindLabel::queue_full).Increment();
    deps_.log->warn("queue full, leaving the allocation to the next resync: alloc={} source=watch",
                    alloc.id);
  }
}

void EventWatcher::remember(const std::string& alloc_id, std::uint64_t modify_index) {
  auto [it, inserted] = seen_.try_emplace(alloc_id);
  it->second.modify_index = modify_index;
  if (!inserted || seen_.size() <= options_.max_tracked) return;
  // Over the bound (far more live allocations than a node runs): drop the least recently
  // modified other entry. At worst that allocation is enqueued once more later.
  auto oldest = seen_.end();
  for (auto e = seen_.begin(); e != seen_.end(); ++e) {
    if (e == it) continue;
    if (oldest == seen_.end() || e->second.modify_index < oldest->second.modify_index) oldest = e;
  }
  if (oldest != seen_.end()) seen_.erase(oldest);
}

}  // namespace cn::labeler
