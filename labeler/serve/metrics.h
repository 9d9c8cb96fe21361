#pragma once
// The labeler's metrics on one prometheus-cpp registry. Call sites reach a series only through a
// typed accessor, so a misspelt name or label cannot compile, and every label value comes from a
// closed set (peers, error kinds, sources, ops): nothing grows with the number of allocations.
// Series whose label values are known in advance exist at 0 from construction, so rate() and
// increase() in alerts have a baseline from the first scrape.
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include "common/notify/protocol.h"
#include "common/util/result.h"
#include "common/util/retry_rule.h"
#include "labeler/cluster/cluster_metrics.h"
#include "labeler/daemon/daemon_config.h"
#include "labeler/labeling/labeling_metrics.h"
#include "labeler/policy/policy_metrics.h"
#include "labeler/services/services_metrics.h"

namespace cn::labeler {

// cilium_nomad_errors_total{kind}. The label value is the enumerator's name (to_string).
enum class ErrorKindLabel {
  state_write,            // the state file could not be written
  label_write,            // the agent refused or failed a label write
  labels_filtered,        // the agent's --labels filter drops nomad: labels
  endpoint_id,            // an endpoint ID that cannot be used in a request
  exception,              // a worker, watcher or resync threw
  queue_full,             // work dropped because the queue was full
  reconcile,              // a resync reconcile failed
  gc_delete,              // --gc-endpoints could not delete an orphan
  nomad_watch,            // a node watch call failed
  nomad_index_reset,      // Nomad's index went backwards (restore, new cluster)
  nomad_stream_open,      // the event stream ended before its first line
  nomad_stream,           // the event stream ended after delivering lines
  nomad_stream_bad_line,  // the event stream sent a line that is not an event frame
  nomad_event_payload,    // an event frame whose payload could not be used
};
inline constexpr ErrorKindLabel kAllErrorKindLabels[] = {
    ErrorKindLabel::state_write,
    ErrorKindLabel::label_write,
    ErrorKindLabel::labels_filtered,
    ErrorKindLabel::endpoint_id,
    ErrorKindLabel::exception,
    ErrorKindLabel::queue_full,
    ErrorKindLabel::reconcile,
    ErrorKindLabel::gc_delete,
    ErrorKindLabel::nomad_watch,
    ErrorKindLabel::nomad_index_reset,
    ErrorKindLabel::nomad_stream_open,
    ErrorKindLabel::nomad_stream,
    ErrorKindLabel::nomad_stream_bad_line,
    ErrorKindLabel::nomad_event_payload,
};
std::string_view to_string(ErrorKindLabel kind);

// cilium_nomad_notifications_total{op,outcome}.
enum class NotifyOutcome { accepted, invalid, refused_peer, unreadable };
std::string_view to_string(NotifyOutcome outcome);

// The registry holder comes first among Metrics' bases, so the registry exists before any part
// registers its families on it.
class MetricsRegistry {
 protected:
  MetricsRegistry() : registry_(std::make_shared<prometheus::Registry>()) {}
  std::shared_ptr<prometheus::Registry> registry_;
};

// The labeler's one registry: each component's metrics part (labeling, policy, cluster duties,
// services) is declared beside that component and registered here, and the daemon-wide series
// (outside calls, errors, notifications, watch, queue, health) are declared below. Components take
// the part they report to, so they depend on their own metrics and not on this file.
class Metrics : private MetricsRegistry,
                public LabelingMetrics,
                public PolicyMetrics,
                public ClusterMetrics,
                public ServicesMetrics {
 public:
  Metrics();
  Metrics(const Metrics&) = delete;
  Metrics& operator=(const Metrics&) = delete;

  // Counters.
  // status="ok" when `error` is empty, else the error's kind (the one scheme for outside calls).
  prometheus::Counter& api_calls(Peer target, std::optional<ErrorKind> error);
  prometheus::Counter& errors(ErrorKindLabel kind);
  // op="unknown" when the notification's op was never read (refused, unreadable, invalid).
  prometheus::Counter& notifications(std::optional<notify::Op> op, NotifyOutcome outcome);
  prometheus::Counter& watch_reconnects(WatchMode mode);
  prometheus::Counter& endpoints_deleted() { return endpoints_deleted_; }

  // Gauges.
  prometheus::Gauge& queue_depth() { return queue_depth_; }
  prometheus::Gauge& orphan_endpoints() { return orphan_endpoints_; }
  prometheus::Gauge& state_entries() { return state_entries_; }
  prometheus::Gauge& ready() { return ready_; }

  // Histograms, in seconds.
  prometheus::Histogram& reconcile_duration_seconds() { return reconcile_duration_; }

  // Prometheus text exposition (format 0.0.4) of every family.
  std::string render() const;
  // Runs at the start of every render(): for gauges that age between events. Set before the
  // status server starts.
  void set_before_render(std::function<void()> refresh) { before_render_ = std::move(refresh); }
  const prometheus::Registry& registry() const { return *registry_; }

 private:
  prometheus::Family<prometheus::Counter>& api_calls_family_;
  prometheus::Family<prometheus::Counter>& errors_family_;
  prometheus::Family<prometheus::Counter>& notifications_family_;
  prometheus::Family<prometheus::Counter>& watch_reconnects_family_;
  prometheus::Counter& endpoints_deleted_;
  prometheus::Gauge& queue_depth_;
  prometheus::Gauge& orphan_endpoints_;
  prometheus::Gauge& state_entries_;
  prometheus::Gauge& ready_;
  prometheus::Histogram& reconcile_duration_;
  std::function<void()> before_render_;
};

}  // namespace cn::labeler
