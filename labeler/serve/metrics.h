#pragma once
// Every metric the labeler exposes, declared here and nowhere else, on one prometheus-cpp
// registry. Call sites reach a series only through a typed accessor, so a misspelt name or label
// cannot compile, and every label value comes from a closed set (peers, error kinds, sources,
// ops): nothing grows with the number of allocations.
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
#include "common/util/mutex.h"
#include "common/util/result.h"
#include "common/util/retry_rule.h"
#include "labeler/cluster/duty.h"
#include "labeler/daemon/daemon_config.h"
#include "labeler/daemon/work_item.h"
#include "labeler/labeling/label_failure.h"

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

// cilium_nomad_notifications_total{op,outcome}.
enum class NotifyOutcome { accepted, invalid, refused_peer, unreadable };
std::string_view to_string(NotifyOutcome outcome);

// cilium_nomad_policy_errors_total{reason}: what kept a policy from the directory.
enum class PolicyErrorReason {
  list,           // the variable list failed
  read,           // a variable could not be read
  invalid,        // a policy was refused (validation, size, count, name)
  not_delegated,  // its variable's namespace may not write it (docs/policies.md "Delegation")
  write,          // the directory could not be listed or a file written
  remove,         // a file of a deleted variable could not be removed
  audit,          // an endpoint's PolicyAuditMode could not be read or set (retried)
};
inline constexpr PolicyErrorReason kAllPolicyErrorReasons[] = {
    PolicyErrorReason::list,          PolicyErrorReason::read,  PolicyErrorReason::invalid,
    PolicyErrorReason::not_delegated, PolicyErrorReason::write, PolicyErrorReason::remove,
    PolicyErrorReason::audit};
std::string_view to_string(PolicyErrorReason reason);

class Metrics {
 public:
  Metrics();
  Metrics(const Metrics&) = delete;
  Metrics& operator=(const Metrics&) = delete;

  // Counters.
  prometheus::Counter& endpoints_labeled(WorkSource source);
  prometheus::Counter& label_writes(LabelWriteApi api);
  // status="ok" when `error` is empty, else the error's kind (the one scheme for outside calls).
  prometheus::Counter& api_calls(Peer target, std::optional<ErrorKind> error);
  prometheus::Counter& errors(ErrorKindLabel kind);
  // op="unknown" when the notification's op was never read (refused, unreadable, invalid).
  prometheus::Counter& notifications(std::optional<notify::Op> op, NotifyOutcome outcome);
  prometheus::Counter& watch_reconnects(WatchMode mode);
  prometheus::Counter& endpoints_deleted() { return endpoints_deleted_; }
  prometheus::Counter& policy_errors(PolicyErrorReason reason);
  // cilium_nomad_label_failures_total{reason}: every attempt that did not label, by why.
  prometheus::Counter& label_failures(LabelFailure reason);
  prometheus::Counter& identity_sources(IdentitySource source);
  // Labels written from CNI_ARGS that Nomad's answer then contradicted: should stay 0.
  prometheus::Counter& cni_args_relabels() { return cni_args_relabels_; }

  // Cluster duties (labeler/cluster/). `dry_run` passes count what they would have deleted.
  prometheus::Counter& cluster_leader_terms() { return cluster_leader_terms_family_.Add({}); }
  prometheus::Counter& cluster_duty_passes(cluster::DutyName duty, cluster::PassEnd end);
  prometheus::Counter& cluster_duty_deletions(cluster::DutyName duty, bool dry_run);
  prometheus::Counter& cluster_duty_skips(cluster::DutyName duty, cluster::SkipReason reason);
  prometheus::Counter& identity_reports(bool ok);
  prometheus::Gauge& cluster_duty_last_success(cluster::DutyName duty);
  prometheus::Gauge& cluster_leader() { return cluster_leader_family_.Add({}); }
  // cilium_nomad_cluster_leader_info{holder}: one series, the leader as this labeler last read
  // it (none while unknown). Its value comes from etcd, so the old series is removed first:
  // the family never holds more than one.
  void set_cluster_leader_holder(const std::string& holder) EXCLUDES(leader_info_mu_);
  // Identity headroom, set by the leader's identity GC passes from what they read: the master
  // keys in this cluster's range, the range's size (0 while unknown: the GC refuses to run), the
  // users of one identity (stat: min, avg, max) and the identities first seen since the previous
  // pass.
  prometheus::Gauge& identities() { return identities_family_.Add({}); }
  prometheus::Gauge& identity_range_size() { return identity_range_size_family_.Add({}); }
  prometheus::Gauge& identity_users(std::string_view stat);
  prometheus::Counter& identities_first_seen() { return identities_first_seen_family_.Add({}); }
  // In-use reports the leader's last identity GC pass could not parse: the pass went on, and
  // those nodes' identities were kept by their user keys alone.
  prometheus::Gauge& in_use_reports_unreadable() {
    return in_use_reports_unreadable_family_.Add({});
  }
  // Unused duplicates (another master key holds the label string) the last pass found.
  prometheus::Gauge& identity_duplicates_unused() { return identity_duplicates_family_.Add({}); }
  // Creates the cluster-duty series at 0; called only when the duties are configured, so that a
  // labeler without them does not expose a page of zeros.
  void init_cluster_duty_series();

  // Gauges.
  prometheus::Gauge& queue_depth() { return queue_depth_; }
  prometheus::Gauge& orphan_endpoints() { return orphan_endpoints_; }
  prometheus::Gauge& state_entries() { return state_entries_; }
  prometheus::Gauge& ready() { return ready_; }
  prometheus::Gauge& policies_applied() { return policies_applied_; }
  prometheus::Gauge& policy_audit_endpoints() { return policy_audit_endpoints_; }
  prometheus::Gauge& policies_invalid() { return policies_invalid_; }
  prometheus::Gauge& policy_last_apply_timestamp() { return policy_last_apply_; }
  // cilium_nomad_policies_unsupported{option}: policies not written on this node because its
  // agent runs without `option` (an agent flag name, e.g. enable-node-selector-labels).
  prometheus::Gauge& policies_unsupported(std::string_view option);
  // Allocations of this node whose endpoint does not carry its final labels yet, and how long
  // the one waiting longest has waited (labeler/labeling/unlabeled_tracker.h keeps both).
  prometheus::Gauge& unlabeled_allocations() { return unlabeled_allocations_; }
  prometheus::Gauge& unlabeled_oldest_seconds() { return unlabeled_oldest_seconds_; }
  prometheus::Gauge& alloc_cache_entries() { return alloc_cache_entries_; }

  // Histograms, in seconds.
  prometheus::Histogram& add_to_labeled_seconds() { return add_to_labeled_; }
  prometheus::Histogram& reconcile_duration_seconds() { return reconcile_duration_; }

  // Prometheus text exposition (format 0.0.4) of every family.
  std::string render() const;
  // Runs at the start of every render(): for gauges that age between events. Set before the
  // status server starts.
  void set_before_render(std::function<void()> refresh) { before_render_ = std::move(refresh); }
  const prometheus::Registry& registry() const { return *registry_; }

 private:
  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Family<prometheus::Counter>& endpoints_labeled_family_;
  prometheus::Family<prometheus::Counter>& label_writes_family_;
  prometheus::Family<prometheus::Counter>& api_calls_family_;
  prometheus::Family<prometheus::Counter>& errors_family_;
  prometheus::Family<prometheus::Counter>& notifications_family_;
  prometheus::Family<prometheus::Counter>& watch_reconnects_family_;
  prometheus::Family<prometheus::Counter>& policy_errors_family_;
  prometheus::Family<prometheus::Counter>& label_failures_family_;
  prometheus::Family<prometheus::Counter>& identity_sources_family_;
  prometheus::Counter& cni_args_relabels_;
  prometheus::Family<prometheus::Counter>& cluster_leader_terms_family_;
  prometheus::Family<prometheus::Counter>& cluster_duty_passes_family_;
  prometheus::Family<prometheus::Counter>& cluster_duty_deletions_family_;
  prometheus::Family<prometheus::Counter>& cluster_duty_skips_family_;
  prometheus::Family<prometheus::Counter>& identity_reports_family_;
  prometheus::Family<prometheus::Gauge>& cluster_duty_last_success_family_;
  prometheus::Family<prometheus::Gauge>& cluster_leader_family_;
  prometheus::Family<prometheus::Gauge>& cluster_leader_info_family_;
  prometheus::Family<prometheus::Gauge>& identities_family_;
  prometheus::Family<prometheus::Gauge>& identity_range_size_family_;
  prometheus::Family<prometheus::Gauge>& identity_users_family_;
  prometheus::Family<prometheus::Gauge>& policies_unsupported_family_;
  prometheus::Family<prometheus::Counter>& identities_first_seen_family_;
  prometheus::Family<prometheus::Gauge>& in_use_reports_unreadable_family_;
  prometheus::Family<prometheus::Gauge>& identity_duplicates_family_;
  Mutex leader_info_mu_;
  prometheus::Gauge* cluster_leader_info_ GUARDED_BY(leader_info_mu_) = nullptr;
  std::string cluster_leader_holder_ GUARDED_BY(leader_info_mu_);
  prometheus::Counter& endpoints_deleted_;
  prometheus::Gauge& queue_depth_;
  prometheus::Gauge& orphan_endpoints_;
  prometheus::Gauge& state_entries_;
  prometheus::Gauge& ready_;
  prometheus::Gauge& policies_applied_;
  prometheus::Gauge& policy_audit_endpoints_;
  prometheus::Gauge& policies_invalid_;
  prometheus::Gauge& policy_last_apply_;
  prometheus::Gauge& unlabeled_allocations_;
  prometheus::Gauge& unlabeled_oldest_seconds_;
  prometheus::Gauge& alloc_cache_entries_;
  prometheus::Histogram& add_to_labeled_;
  prometheus::Histogram& reconcile_duration_;
  std::function<void()> before_render_;
};

}  // namespace cn::labeler
