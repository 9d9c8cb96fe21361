#include "labeler/watch/node_watcher.h"

#include <algorithm>
#include <vector>

#include <spdlog/spdlog.h>

namespace cn::labeler {

NodeWatcher::NodeWatcher(WatcherDeps deps, NodeWatchOptions options)
    : deps_(std::move(deps)),
      options_(options),
      jitter_(BackoffJitter::seed_or_random(options.seed)),
      index_(options.initial_index) {
  if (!deps_.log) deps_.log = spdlog::default_logger();
}

std::chrono::seconds NodeWatcher::next_wait() {
  auto wait = std::clamp(options_.wait, std::chrono::seconds{1}, std::chrono::seconds{300});
  if (options_.jitter_divisor > 0) {
    long long spread = wait.count() / options_.jitter_divisor;
    wait -= std::chrono::seconds{jitter_.uniform(0, spread)};
  }
  return std::max(wait, std::chrono::seconds{1});
}

void NodeWatcher::run(std::stop_token stop) {
  deps_.log->info("node watch started: node={} index={} wait_s={}", deps_.node_id, index_.load(),
                  options_.wait.count());
  BackoffStrategy backoff(options_.backoff, jitter_);
  while (!stop.stop_requested()) {
    const std::uint64_t asked = index_.load();
    // Index 0 never blocks (a full listing), so it gets the plain call deadline.
    const std::chrono::seconds wait = asked == 0 ? std::chrono::seconds{0} : next_wait();
    const MonoTime started = deps_.clock.now();
    const MonoTime deadline = started + wait + wait / 16 + options_.call_timeout;
    // A Job is decoded once per allocation and ModifyIndex: everything in the first answer (and
    // after a reset), then the new and changed allocations, which include all apply() enqueues.
    // The others' Job bytes, most of each answer, are skipped undecoded.
    auto unseen = [this](std::string_view id, std::uint64_t modify_index) {
      auto it = listed_.find(id);
      return it == listed_.end() || it->second.modify_index != modify_index;
    };
    auto answer = deps_.nomad.node_allocations(deps_.node_id, asked, wait, deadline, stop, unseen);
    if (stop.stop_requested()) break;
    deps_.calls.record(Peer::nomad, answer);

    if (!answer) {
      deps_.metrics.errors(ErrorKindLabel::nomad_watch).Increment();
      deps_.metrics.watch_reconnects(WatchMode::kNode).Increment();
      auto delay = backoff.next_delay();
      deps_.log->warn(
          "node watch failed, retrying: node={} index={} kind={} error=\"{}\" attempt={} "
          "retry_ms={}{}",
          deps_.node_id, asked, to_string(answer.error().kind), answer.error().message,
          backoff.retries(), delay.count(), remedy_note(answer.error()));
      if (!deps_.clock.sleep_for(delay, stop)) break;
      continue;
    }
    backoff.reset();

    // Nomad never answers index 0 on purpose; treating it as 1 keeps an empty node's listing
    // from looking like a reset and from turning every query into a non-blocking one.
    const std::uint64_t got = std::max<std::uint64_t>(answer->index, 1);
    if (asked > 0 && got < asked && explained_by_gc(answer->value)) {
      deps_.log->debug(
          "node watch: index went down after garbage collection: node={} asked={} got={}",
          deps_.node_id, asked, got);
    } else if (asked > 0 && got < asked) {
      deps_.metrics.errors(ErrorKindLabel::nomad_index_reset).Increment();
      deps_.metrics.watch_reconnects(WatchMode::kNode).Increment();
      deps_.log->warn(
          "nomad index went backwards (servers restored?), resyncing: node={} asked={} got={}",
          deps_.node_id, asked, got);
      known_.clear();
      if (options_.cache) options_.cache->clear();
      listed_.clear();
      known_complete_ = false;
      rebaseline_ = true;
      index_ = 0;
      continue;
    }

    for (const auto& rejected : answer->value.rejected) {
      deps_.log->warn("node watch: unusable allocation in listing: node={} error=\"{}\"",
                      deps_.node_id, rejected.message);
    }
    const bool baseline = rebaseline_ && asked == 0;
    // Before the work is queued, so that the plugin's notification for an allocation of this
    // answer finds it in the cache.
    if (options_.cache) options_.cache->rebuild(answer->value.allocations, got);
    apply(answer->value, asked, baseline);
    // Updated in place: on a quiet node nothing is allocated here.
    ++answers_;
    for (const auto& alloc : answer->value.allocations)
      listed_.insert_or_assign(alloc.id, Listed{alloc.modify_index, answers_});
    std::erase_if(listed_, [this](const auto& entry) { return entry.second.answer != answers_; });
    index_ = got;
    if (baseline) {
      rebaseline_ = false;
      // After the new baseline, so a change between the two is caught by the next blocking
      // query and anything before it by the resync.
      deps_.resync();
    }

    if (got <= asked) {
      auto quick = options_.min_quiet_interval - (deps_.clock.now() - started);
      if (quick > std::chrono::nanoseconds::zero() && !deps_.clock.sleep_for(quick, stop)) break;
    }
  }
  deps_.log->info("node watch stopped: node={} index={}", deps_.node_id, index_.load());
}

void NodeWatcher::apply(const nomad::AllocationList& list, std::uint64_t asked, bool baseline) {
  std::map<std::string, std::uint64_t> next;
  std::size_t enqueued = 0;
  for (const auto& alloc : list.allocations) {
    // The endpoint is node-scoped; the check costs nothing and guards against a confused proxy.
    if (!alloc.node_id.empty() && alloc.node_id != deps_.node_id) continue;
    auto it = known_.find(alloc.id);
    const std::uint64_t known = it != known_.end() ? it->second : asked;
    const bool changed = alloc.modify_index > known || (asked == 0 && it == known_.end());
    // Terminal allocations are not tracked: they never need labels again, and untracked ones
    // fall back to the asked-index rule, which stays correct.
    // The exact ModifyIndex, not a max: explained_by_gc compares it with the next answers.
    if (!alloc.is_terminal()) next[alloc.id] = alloc.modify_index;
    if (baseline || !changed || !wants_labels(alloc)) continue;
    if (deps_.enqueue(watch_work_item(alloc, true))) {
      ++enqueued;
      deps_.log->debug("node watch: enqueued alloc={} modify_index={}", alloc.id,
                       alloc.modify_index);
    } else {
      deps_.metrics.errors(ErrorKindLabel::queue_full).Increment();
      deps_.log->warn(
          "queue full, leaving the allocation to the next resync: alloc={} source=watch", alloc.id);
    }
  }
  known_complete_ = next.size() <= options_.max_tracked;
  if (!known_complete_) {
    // Keep the most recently modified; the dropped ones are old and stable.
    std::vector<std::pair<std::uint64_t, std::string>> order;
    order.reserve(next.size());
    for (const auto& [id, mi] : next) order.emplace_back(mi, id);
    std::sort(order.begin(), order.end());
    for (std::size_t i = 0; i + options_.max_tracked < order.size(); ++i)
      next.erase(order[i].second);
  }
  known_ = std::move(next);
  if (enqueued > 0 || baseline) {
    deps_.log->info("node watch: node={} allocations={} enqueued={} baseline={}", deps_.node_id,
                    list.allocations.size(), enqueued, baseline);
  }
}

bool NodeWatcher::explained_by_gc(const nomad::AllocationList& list) const {
  return std::ranges::all_of(list.allocations, [&](const nomad::Allocation& alloc) {
    if (!alloc.node_id.empty() && alloc.node_id != deps_.node_id) return true;
    auto it = known_.find(alloc.id);
    // Below the asked index no write can have touched it since the last answer.
    if (it != known_.end()) return alloc.modify_index == it->second;
    // Live now means live in the last answer too (a terminal allocation never comes back).
    return !known_complete_ || alloc.is_terminal();
  });
}

}  // namespace cn::labeler
