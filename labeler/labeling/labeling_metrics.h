#pragma once
// The label path's metrics: what was labeled, how, from which identity source, what failed and
// how long a workload waited. Owned by the label path and registered on the labeler's one
// registry (labeler/serve/metrics.h).
#include <string_view>

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include "labeler/daemon/work_item.h"
#include "labeler/labeling/label_failure.h"

namespace cn::labeler {

// cilium_nomad_label_writes_total{api}: which agent API carried the write.
enum class LabelWriteApi { endpoint, labels };
std::string_view to_string(LabelWriteApi api);

// cilium_nomad_identity_sources_total{source}: where a labeling attempt took the allocation's
// identity from. `allocation`: the work item carried it (watch, reconcile); `cache`: the watch's
// allocation cache; `cni_args`: the plugin's CNI_ARGS, checked against Nomad afterwards; `nomad`:
// a GET of the allocation.
enum class IdentitySource { allocation, cache, cni_args, nomad };
inline constexpr IdentitySource kAllIdentitySources[] = {
    IdentitySource::allocation, IdentitySource::cache, IdentitySource::cni_args,
    IdentitySource::nomad};
std::string_view to_string(IdentitySource source);

class LabelingMetrics {
 public:
  explicit LabelingMetrics(prometheus::Registry& registry);
  LabelingMetrics(const LabelingMetrics&) = delete;
  LabelingMetrics& operator=(const LabelingMetrics&) = delete;

  prometheus::Counter& endpoints_labeled(WorkSource source);
  prometheus::Counter& label_writes(LabelWriteApi api);
  // cilium_nomad_label_failures_total{reason}: every attempt that did not label, by why.
  prometheus::Counter& label_failures(LabelFailure reason);
  prometheus::Counter& identity_sources(IdentitySource source);
  // Labels written from CNI_ARGS that Nomad's answer then contradicted: should stay 0.
  prometheus::Counter& cni_args_relabels() { return cni_args_relabels_; }
  // Allocations of this node whose endpoint does not carry its final labels yet, and how long
  // the one waiting longest has waited (labeler/labeling/unlabeled_tracker.h keeps both).
  prometheus::Gauge& unlabeled_allocations() { return unlabeled_allocations_; }
  prometheus::Gauge& unlabeled_oldest_seconds() { return unlabeled_oldest_seconds_; }
  prometheus::Gauge& alloc_cache_entries() { return alloc_cache_entries_; }
  // In seconds.
  prometheus::Histogram& add_to_labeled_seconds() { return add_to_labeled_; }

 private:
  prometheus::Family<prometheus::Counter>& endpoints_labeled_family_;
  prometheus::Family<prometheus::Counter>& label_writes_family_;
  prometheus::Family<prometheus::Counter>& label_failures_family_;
  prometheus::Family<prometheus::Counter>& identity_sources_family_;
  prometheus::Counter& cni_args_relabels_;
  prometheus::Gauge& unlabeled_allocations_;
  prometheus::Gauge& unlabeled_oldest_seconds_;
  prometheus::Gauge& alloc_cache_entries_;
  prometheus::Histogram& add_to_labeled_;
};

}  // namespace cn::labeler
