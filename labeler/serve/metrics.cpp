#include "labeler/serve/metrics.h"

#include <prometheus/text_serializer.h>

#include "labeler/serve/metric_families.h"

namespace cn::labeler {

using prometheus::Counter;
namespace {

constexpr notify::Op kAllOps[] = {notify::Op::kAdd, notify::Op::kDel, notify::Op::kCheck};

}  // namespace

std::string_view to_string(ErrorKindLabel kind) {
  switch (kind) {
    case ErrorKindLabel::state_write:
      return "state_write";
    case ErrorKindLabel::label_write:
      return "label_write";
    case ErrorKindLabel::labels_filtered:
      return "labels_filtered";
    case ErrorKindLabel::endpoint_id:
      return "endpoint_id";
    case ErrorKindLabel::exception:
      return "exception";
    case ErrorKindLabel::queue_full:
      return "queue_full";
    case ErrorKindLabel::reconcile:
      return "reconcile";
    case ErrorKindLabel::gc_delete:
      return "gc_delete";
    case ErrorKindLabel::nomad_watch:
      return "nomad_watch";
    case ErrorKindLabel::nomad_index_reset:
      return "nomad_index_reset";
    case ErrorKindLabel::nomad_stream_open:
      return "nomad_stream_open";
    case ErrorKindLabel::nomad_stream:
      return "nomad_stream";
    case ErrorKindLabel::nomad_stream_bad_line:
      return "nomad_stream_bad_line";
    case ErrorKindLabel::nomad_event_payload:
      return "nomad_event_payload";
  }
  return "exception";
}

std::string_view to_string(NotifyOutcome outcome) {
  switch (outcome) {
    case NotifyOutcome::accepted:
      return "accepted";
    case NotifyOutcome::invalid:
      return "invalid";
    case NotifyOutcome::refused_peer:
      return "refused_peer";
    case NotifyOutcome::unreadable:
      return "unreadable";
  }
  return "invalid";
}

Metrics::Metrics()
    : LabelingMetrics(*registry_),
      PolicyMetrics(*registry_),
      ClusterMetrics(*registry_),
      ServicesMetrics(*registry_),
      api_calls_family_(metric_families::counter(*registry_, "cilium_nomad_api_calls_total",
                                                 "Calls to Nomad and Cilium, by target and "
                                                 "status")),
      errors_family_(
          metric_families::counter(*registry_, "cilium_nomad_errors_total", "Errors, by kind")),
      notifications_family_(
          metric_families::counter(*registry_, "cilium_nomad_notifications_total",
                                   "Plugin notifications received, by op and outcome")),
      watch_reconnects_family_(metric_families::counter(
          *registry_, "cilium_nomad_watch_reconnects_total", "Watch loop restarts, by mode")),
      endpoints_deleted_(metric_families::counter(*registry_,
                                                  "cilium_nomad_endpoints_deleted_total",
                                                  "Orphaned endpoints deleted with --gc-endpoints")
                             .Add({})),
      queue_depth_(metric_families::gauge(*registry_, "cilium_nomad_queue_depth",
                                          "Allocations waiting in the work queue")),
      orphan_endpoints_(
          metric_families::gauge(*registry_, "cilium_nomad_orphan_endpoints",
                                 "Endpoints of allocations Nomad no longer runs on this node")),
      state_entries_(metric_families::gauge(*registry_, "cilium_nomad_state_entries",
                                            "Entries in the node state file")),
      ready_(metric_families::gauge(*registry_, "cilium_nomad_ready",
                                    "1 when /healthz says ok: first reconcile done, neither "
                                    "Cilium nor Nomad unreachable longer than "
                                    "--unhealthy-after")),
      reconcile_duration_(metric_families::histogram(
          *registry_, "cilium_nomad_reconcile_duration_seconds", "Duration of full reconciliations",
          {0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30})) {
  // Every series whose labels are known before anything happens, so it is scraped as 0.
  api_calls(Peer::nomad, std::nullopt);
  api_calls(Peer::cilium, std::nullopt);
  for (ErrorKindLabel kind : kAllErrorKindLabels) errors(kind);
  for (notify::Op op : kAllOps) notifications(op, NotifyOutcome::accepted);
  for (NotifyOutcome outcome :
       {NotifyOutcome::invalid, NotifyOutcome::refused_peer, NotifyOutcome::unreadable}) {
    notifications(std::nullopt, outcome);
  }
  watch_reconnects(WatchMode::kNode);
  watch_reconnects(WatchMode::kEvents);
}

Counter& Metrics::api_calls(Peer target, std::optional<ErrorKind> error) {
  return api_calls_family_.Add(
      {{"target", target == Peer::nomad ? "nomad" : "cilium"},
       {"status", error ? metric_families::label(to_string(*error)) : "ok"}});
}

Counter& Metrics::errors(ErrorKindLabel kind) {
  return errors_family_.Add({{"kind", metric_families::label(to_string(kind))}});
}

Counter& Metrics::notifications(std::optional<notify::Op> op, NotifyOutcome outcome) {
  return notifications_family_.Add(
      {{"op", op ? metric_families::label(notify::to_string(*op)) : "unknown"},
       {"outcome", metric_families::label(to_string(outcome))}});
}

Counter& Metrics::watch_reconnects(WatchMode mode) {
  return watch_reconnects_family_.Add({{"mode", to_string(mode)}});
}

std::string Metrics::render() const {
  if (before_render_) before_render_();
  return prometheus::TextSerializer().Serialize(registry_->Collect());
}

}  // namespace cn::labeler
