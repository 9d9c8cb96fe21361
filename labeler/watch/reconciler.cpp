#include "labeler/watch/reconciler.h"

#include <malloc.h>

#include <future>
#include <map>
#include <set>

#include <spdlog/spdlog.h>

#include "common/cilium/model/label_write_plan.h"
#include "common/labels/derive_labels.h"
#include "labeler/labeling/identity_trust.h"
#include "labeler/labeling/state_rebuild.h"

namespace cn::labeler {

Reconciler::Reconciler(LabelPathDeps deps, LabelSettings settings)
    : deps_(std::move(deps)), settings_(std::move(settings)) {
  if (!deps_.log) deps_.log = spdlog::default_logger();
}

// One pass whose steps depend on their order (state, both lists, endpoints, unmatched entries, one
// state write, then the work): splitting it to satisfy a score would scatter that order.
// NOLINTNEXTLINE(readability-function-cognitive-complexity)
Result<ReconcileReport> Reconciler::run(const std::string& node_id,
                                        const std::function<bool(WorkItem)>& enqueue,
                                        std::stop_token stop) {
  const MonoTime started = deps_.clock.now();
  const long long started_unix_ms = unix_millis(deps_.clock.wall_now());
  const Deadline deadline{started + settings_.call_timeout * 4, stop};
  ReconcileReport report;

  auto doc = deps_.state.load();
  if (!doc) return fail("state: " + doc.error().message);
  (void)deps_.state
      .remove_orphan_temp_files();  // best effort: a leftover costs disk, never correctness

  // The two lists are independent, and on a big node each is tens of megabytes to fetch and
  // decode: Nomad's (the larger, with the Job in every allocation) comes in on its own thread
  // while the agent's does. One node-scoped call, not allocation stubs plus a job read per
  // distinct job (stubs lack ParentID, so that is 1 + jobs calls even without meta labels): its
  // decode skips the unread bytes and decodes each job version once (10,000 allocations:
  // 0.11-0.15 s instead of 0.54-0.80 s; docs/benchmarks.md, "Decoding only what changed").
  auto pending_allocs = std::async(std::launch::async, [&] {
    return deps_.nomad.node_allocations(node_id, 0, std::chrono::seconds{0}, deadline.at,
                                        deadline.stop);
  });
  // Before the call: anything labeled after this instant may be missing from the list.
  const MonoTime listed_at = deps_.clock.now();
  auto endpoints = deps_.cilium.endpoints(deadline);
  auto allocs = pending_allocs.get();
  deps_.calls.record(Peer::cilium, endpoints);
  deps_.calls.record(Peer::nomad, allocs);
  // Only here is it known which peer failed, so only here can the fix be named.
  for (const auto& [peer, error] :
       {std::pair{Peer::cilium, endpoints ? nullptr : &endpoints.error()},
        std::pair{Peer::nomad, allocs ? nullptr : &allocs.error()}}) {
    if (error == nullptr) continue;
    if (auto fix = remedy(*error, peer); !fix.empty()) {
      deps_.log->warn("reconcile blocked until fixed: kind={} fix=\"{}\"", to_string(error->kind),
                      fix);
    }
  }
  if (!endpoints) return std::unexpected(with_context("Cilium endpoint list: ", endpoints.error()));
  if (!allocs) return std::unexpected(with_context("Nomad node allocations: ", allocs.error()));
  report.nomad_index = allocs->index;
  if (settings_.cache) settings_.cache->rebuild(allocs->value.allocations, allocs->index);
  for (const auto& rejected : allocs->value.rejected) {
    deps_.log->warn("reconcile: Nomad allocation skipped: error=\"{}\"", rejected.message);
  }

  std::map<std::string, const nomad::Allocation*> by_id;
  for (const auto& a : allocs->value.allocations) {
    by_id[a.id] = &a;
    if (!a.is_terminal()) ++report.live_allocations;
  }

  // Label work, handed to the queue only after the state write below: a worker records onto the
  // entry this pass may rebuild, and never creates one itself.
  std::vector<WorkItem> work;
  // Learned without extra calls: endpoints already right, to note in the state file.
  std::map<std::string, state::LabeledInfo> confirmed;
  std::map<std::string, std::pair<const cilium::Endpoint*, const nomad::Allocation*>> seen;
  std::set<std::string> handled;
  // What keeps an endpoint from its labels until someone acts: counted, and recorded as the
  // entry's last attempt, as a worker's failure is.
  std::map<std::string, state::LastAttempt> failed;
  const std::string pass_at = rfc3339(deps_.clock.wall_now());
  auto waiting_since = [&](const std::string& id) {
    auto it = doc->allocations.find(id);
    return it != doc->allocations.end() && it->second.added_unix_ms > 0 ? it->second.added_unix_ms
                                                                        : started_unix_ms;
  };
  auto fails = [&](const std::string& id, LabelFailure failure, std::string detail) {
    deps_.metrics.label_failures(failure).Increment();
    failed[id] = state::LastAttempt{std::string(to_string(failure)), std::move(detail), pass_at};
    report.unlabeled[id] = waiting_since(id);
  };
  // One cluster name for the whole pass, read once rather than per endpoint.
  const labels::LabelPolicy policy = label_policy(settings_);

  for (const auto& ep : endpoints->endpoints) {
    if (cilium::is_reserved_only(ep)) continue;
    auto owner = cilium::attachment_of(ep);
    if (!owner) continue;  // not a CNI endpoint of a Nomad allocation
    ++report.endpoints;
    auto it = by_id.find(owner->alloc_id);
    if (it == by_id.end() || it->second->is_terminal()) {
      ++report.orphans;
      report.orphan_endpoints.emplace_back(owner->alloc_id, ep.id);
      continue;
    }
    const nomad::Allocation& alloc = *it->second;
    seen[alloc.id] = {&ep, &alloc};
    handled.insert(alloc.id);
    auto identity = trusted_identity(NomadClaim{alloc}, owner->alloc_id, TrustRules{});
    if (!identity) {
      const std::string& why = identity.error().message;
      deps_.log->warn("reconcile: cannot label: alloc={} error=\"{}\"", alloc.id, why);
      fails(alloc.id, LabelFailure::nomad_answer_unusable, why);
      continue;
    }
    auto desired = labels::derive_labels(*identity, policy);
    auto plan = cilium::plan_label_write(ep, desired);
    if (plan.action == cilium::LabelWriteAction::none) {
      ++report.correct;
      confirmed[alloc.id] = state::LabeledInfo{ep.id, ep.identity_id, desired.to_strings(),
                                               rfc3339(deps_.clock.wall_now())};
      continue;
    }
    if (plan.action != cilium::LabelWriteAction::write) {
      deps_.log->warn("reconcile: not writable: alloc={} endpoint={} reason=\"{}\"", alloc.id,
                      ep.id, plan.reason);
      if (plan.action == cilium::LabelWriteAction::filtered) {
        fails(alloc.id, LabelFailure::labels_filtered, std::string(kLabelsFilteredDetail));
      } else {
        fails(alloc.id, LabelFailure::endpoint_unusable, plan.reason);
      }
      continue;
    }
    report.unlabeled[alloc.id] = waiting_since(alloc.id);
    WorkItem item;
    item.alloc_id = alloc.id;
    if (!owner->ifname.empty()) item.ifname = owner->ifname;
    item.alloc = alloc;
    item.endpoint = ep;
    item.endpoint_seen_at = listed_at;
    item.source = WorkSource::kReconcile;
    item.confirm = false;  // nobody waits; the next reconcile sees the resolved identity
    work.push_back(std::move(item));
  }

  // Entries the plugin recorded whose endpoint the list did not show under their attachment
  // (an agent without cni-attachment-id, or one not yet created): the worker looks them up.
  std::set<std::string> drop;
  for (const auto& [id, entry] : doc->allocations) {
    if (handled.contains(id)) continue;
    auto it = by_id.find(id);
    if (it != by_id.end()) {
      if (it->second->is_terminal()) {
        drop.insert(id);
        continue;
      }
      if (entry.labeled && entry.labeled->identity != 0) continue;
      report.unlabeled[id] = waiting_since(id);
      WorkItem item;
      item.alloc_id = id;
      if (!entry.ifname.empty()) item.ifname = entry.ifname;
      item.ips = entry.ips;
      item.alloc = *it->second;
      item.source = WorkSource::kReconcile;
      item.confirm = false;
      work.push_back(std::move(item));
      continue;
    }
    // Not on this node's list: gone, or never this node's. Ask once before forgetting it.
    auto one = deps_.nomad.allocation(id, deadline);
    deps_.calls.record(Peer::nomad, one);
    if ((!one && one.error().kind == ErrorKind::not_found) || (one && one->is_terminal()))
      drop.insert(id);
  }

  // One state write for everything learned.
  const long long now_ms = unix_millis(deps_.clock.wall_now());
  const long long tombstone_ttl_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(state::kTombstoneTtl).count();
  auto ok = deps_.state.update([&](state::StateDoc& d) {
    bool changed = false;
    for (const auto& id : drop) changed = d.allocations.erase(id) > 0 || changed;
    // Old enough that nothing can still be working from a list that showed the allocation alive.
    changed =
        std::erase_if(d.deleted,
                      [&](const auto& kv) { return now_ms - kv.second > tombstone_ttl_ms; }) > 0 ||
        changed;
    for (const auto& [id, found] : seen) {
      // The lists were read before this lock: a DEL since then left a tombstone, and the
      // endpoint the agent showed is being torn down. Never bring such an entry back.
      if (d.deleted.contains(id)) continue;
      auto [it, inserted] = d.allocations.try_emplace(id);
      state::StateEntry& e = it->second;
      if (inserted) {
        // A live endpoint of a live allocation with no entry: the plugin's record was lost
        // (a corrupt or deleted file) or it never ran. Rebuilt from what the agent shows.
        e = rebuild_entry(*found.first, *found.second, deps_.clock.wall_now());
        changed = true;
      }
      if (auto failure = failed.find(id); failure != failed.end()) {
        auto& last = e.last_attempt;
        // The same failure as before keeps its first time, as a worker's does.
        if (!last || last->reason != failure->second.reason ||
            last->detail != failure->second.detail) {
          last = failure->second;
          changed = true;
        }
        continue;
      }
      auto info = confirmed.find(id);
      if (info == confirmed.end()) continue;
      bool same = e.labeled && e.labeled->endpoint_id == info->second.endpoint_id &&
                  e.labeled->identity == info->second.identity &&
                  e.labeled->labels == info->second.labels;
      if (!same) {
        e.labeled = info->second;
        changed = true;
      }
      if (e.last_attempt) {  // labeled as it should be: what failed before is over
        e.last_attempt.reset();
        changed = true;
      }
    }
    deps_.metrics.state_entries().Set(static_cast<double>(d.allocations.size()));
    return changed;
  });
  if (!ok) deps_.log->error("reconcile: state write failed: error=\"{}\"", ok.error().message);
  report.dropped_entries = drop.size();
  if (unlabeled_ != nullptr) unlabeled_->replace(report.unlabeled, started_unix_ms);
  for (auto& item : work) {
    if (enqueue(std::move(item))) ++report.enqueued;
  }

  // The pass held both lists, tens of megabytes on a big node, and freed them; some of it in
  // the Nomad thread's own malloc arena, which would otherwise keep it until the next resync.
  ::malloc_trim(0);

  deps_.metrics.orphan_endpoints().Set(static_cast<double>(report.orphans));
  double seconds = std::chrono::duration<double>(deps_.clock.now() - started).count();
  deps_.metrics.reconcile_duration_seconds().Observe(seconds);
  deps_.log->info(
      "reconcile done: endpoints={} live_allocs={} correct={} enqueued={} dropped_entries={} "
      "orphans={} "
      "index={} ms={:.1f}",
      report.endpoints, report.live_allocations, report.correct, report.enqueued,
      report.dropped_entries, report.orphans, report.nomad_index, seconds * 1000);
  for (const auto& [alloc, ep] : report.orphan_endpoints) {
    deps_.log->info(
        "orphan endpoint: endpoint={} alloc={} reason=\"no live allocation of this node\"", ep,
        alloc);
  }
  return report;
}

}  // namespace cn::labeler
