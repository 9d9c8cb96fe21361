#include "labeler/labeling/labeling_metrics.h"

#include "labeler/serve/metric_families.h"

namespace cn::labeler {

std::string_view to_string(IdentitySource source) {
  switch (source) {
    case IdentitySource::allocation:
      return "allocation";
    case IdentitySource::cache:
      return "cache";
    case IdentitySource::cni_args:
      return "cni_args";
    case IdentitySource::nomad:
      return "nomad";
  }
  return "nomad";
}

std::string_view to_string(LabelWriteApi api) {
  return api == LabelWriteApi::endpoint ? "endpoint" : "labels";
}

LabelingMetrics::LabelingMetrics(prometheus::Registry& registry)
    : endpoints_labeled_family_(
          metric_families::counter(registry, "cilium_nomad_endpoints_labeled_total",
                                   "Label writes that reached their final identity, by source")),
      label_writes_family_(metric_families::counter(registry, "cilium_nomad_label_writes_total",
                                                    "Label writes sent to the Cilium agent, by "
                                                    "API")),
      label_failures_family_(
          metric_families::counter(registry, "cilium_nomad_label_failures_total",
                                   "Labeling attempts that did not label, by reason")),
      identity_sources_family_(metric_families::counter(
          registry, "cilium_nomad_identity_sources_total",
          "Where labeling attempts took the allocation's identity from, by source")),
      cni_args_relabels_(metric_families::counter(registry, "cilium_nomad_cni_args_relabels_total",
                                                  "Labels written from CNI_ARGS that Nomad's "
                                                  "answer then contradicted (relabeled)")
                             .Add({})),
      unlabeled_allocations_(metric_families::gauge(
          registry, "cilium_nomad_unlabeled_allocations",
          "Allocations of this node whose endpoint does not carry its final labels yet")),
      unlabeled_oldest_seconds_(metric_families::gauge(
          registry, "cilium_nomad_unlabeled_oldest_seconds",
          "How long the allocation waiting longest for its labels has waited (0: none)")),
      alloc_cache_entries_(metric_families::gauge(registry, "cilium_nomad_alloc_cache_entries",
                                                  "Allocations of this node the watch's cache can "
                                                  "label without asking Nomad")),
      add_to_labeled_(metric_families::histogram(
          registry, "cilium_nomad_add_to_labeled_seconds",
          "Time from the plugin's ADD to the endpoint carrying its final identity",
          {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60})) {
  for (WorkSource source :
       {WorkSource::kNotify, WorkSource::kReconcile, WorkSource::kWatch, WorkSource::kRetry}) {
    endpoints_labeled(source);
  }
  label_writes(LabelWriteApi::endpoint);
  label_writes(LabelWriteApi::labels);
  for (LabelFailure reason : kAllLabelFailures) label_failures(reason);
  for (IdentitySource source : kAllIdentitySources) identity_sources(source);
}

prometheus::Counter& LabelingMetrics::endpoints_labeled(WorkSource source) {
  return endpoints_labeled_family_.Add({{"source", metric_families::label(to_string(source))}});
}

prometheus::Counter& LabelingMetrics::label_writes(LabelWriteApi api) {
  return label_writes_family_.Add({{"api", metric_families::label(to_string(api))}});
}

prometheus::Counter& LabelingMetrics::label_failures(LabelFailure reason) {
  return label_failures_family_.Add({{"reason", metric_families::label(to_string(reason))}});
}

prometheus::Counter& LabelingMetrics::identity_sources(IdentitySource source) {
  return identity_sources_family_.Add({{"source", metric_families::label(to_string(source))}});
}

}  // namespace cn::labeler
