#pragma once
// Full reconciliation of this node, at startup and on every resync: the state file, ONE
// endpoint list from the agent and ONE node-allocations call to Nomad (full allocations with
// their Job and NetworkStatus), then label work for what is wrong. No per-endpoint Nomad call;
// only state entries Nomad no longer lists cost a confirming GET before they are dropped.
#include <functional>
#include <map>
#include <memory>
#include <string>

#include <spdlog/fwd.h>

#include "common/cilium/client/cilium_api.h"
#include "common/nomad/client/nomad_api.h"
#include "common/state/state_store.h"
#include "labeler/daemon/work_item.h"
#include "labeler/labeling/alloc_labeler.h"
#include "labeler/labeling/unlabeled_tracker.h"
#include "labeler/serve/metrics.h"

namespace cn::labeler {

struct ReconcileReport {
  std::size_t endpoints = 0;         // endpoints of Nomad allocations seen on the agent
  std::size_t live_allocations = 0;  // non-terminal allocations of this node
  std::size_t correct = 0;           // endpoints already carrying their labels (no write)
  std::size_t enqueued = 0;          // label work handed to the queue
  std::size_t dropped_entries = 0;   // state entries of terminal or unknown allocations
  std::size_t orphans = 0;           // endpoints whose allocation Nomad does not run here
  std::vector<std::pair<std::string, long long>> orphan_endpoints;  // alloc ID, endpoint ID
  std::uint64_t nomad_index = 0;
  // Live allocations of this node whose endpoint does not carry its final labels (work handed
  // out, or a failure an operator must fix), and since when (unix ms, the plugin's ADD when
  // recorded): the tracker given to track_unlabeled takes this as its whole view.
  std::map<std::string, long long> unlabeled;
};

class Reconciler {
 public:
  Reconciler(LabelPathDeps deps, LabelSettings settings);

  // `enqueue` hands work to the queue and says whether it was accepted. `stop` abandons the
  // pass's calls (shutdown).
  [[nodiscard]] Result<ReconcileReport> run(const std::string& node_id,
                                            const std::function<bool(WorkItem)>& enqueue,
                                            std::stop_token stop = {});

  // Each pass hands its `unlabeled` view to `tracker` before any of its work is queued, so that
  // a worker finishing that work is never overwritten by the view it came from.
  void track_unlabeled(UnlabeledTracker& tracker) { unlabeled_ = &tracker; }

 private:
  LabelPathDeps deps_;
  LabelSettings settings_;
  UnlabeledTracker* unlabeled_ = nullptr;
};

}  // namespace cn::labeler
