#pragma once
// Which allocations of this node do not carry their final labels yet, and since when: the source
// of cilium_nomad_unlabeled_allocations and cilium_nomad_unlabeled_oldest_seconds, the two gauges
// an alert on "a workload runs without its identity" needs.
//
// Kept in memory from what the daemon learns anyway: a notification starts the wait, a labeling
// outcome ends or extends it, a DEL or a stopped allocation ends it, and every reconcile replaces
// the whole view with what its two lists show (which also catches labels that drifted). Times
// are wall-clock unix ms so that a wait can start at the plugin's ADD recorded in the state file,
// before this process started.
#include <map>
#include <string>

#include "common/util/clock.h"
#include "common/util/mutex.h"
#include "labeler/labeling/labeling_metrics.h"

namespace cn::labeler {

class UnlabeledTracker {
 public:
  UnlabeledTracker(Clock& clock, LabelingMetrics& metrics);

  // The allocation is waiting; a wait already noted keeps its earlier start.
  void waiting(const std::string& alloc_id, long long since_unix_ms) EXCLUDES(mu_);
  // Labeled, deleted or stopped: no longer waiting.
  void done(const std::string& alloc_id) EXCLUDES(mu_);
  // A reconcile's whole view (allocation ID -> waiting since). What was noted before the pass
  // started and the pass did not find waiting is done; what was noted since is kept, as the
  // pass's lists may predate it.
  void replace(const std::map<std::string, long long>& waiting, long long pass_started_unix_ms)
      EXCLUDES(mu_);
  // Sets both gauges. Every change calls it; the scrape calls it too, as the age grows between
  // changes.
  void publish() EXCLUDES(mu_);

  std::size_t size() const EXCLUDES(mu_);

 private:
  struct Wait {
    long long since_unix_ms = 0;
    long long noted_unix_ms = 0;  // when this process last learned of the wait
  };
  void publish_locked() REQUIRES(mu_);

  Clock& clock_;
  LabelingMetrics& metrics_;
  mutable Mutex mu_;
  std::map<std::string, Wait> waits_ GUARDED_BY(mu_);
};

}  // namespace cn::labeler
