#include "labeler/serve/metrics.h"

#include <prometheus/text_serializer.h>

#include "common/cilium/model/agent_options.h"

namespace cn::labeler {
namespace {

using prometheus::Counter;
using prometheus::Family;
using prometheus::Gauge;
using prometheus::Histogram;
using prometheus::Registry;

Family<Counter>& counter(Registry& registry, const char* name, const char* help) {
  return prometheus::BuildCounter().Name(name).Help(help).Register(registry);
}

Gauge& gauge(Registry& registry, const char* name, const char* help) {
  return prometheus::BuildGauge().Name(name).Help(help).Register(registry).Add({});
}

Histogram& histogram(Registry& registry, const char* name, const char* help,
                     const Histogram::BucketBoundaries& bounds) {
  return prometheus::BuildHistogram().Name(name).Help(help).Register(registry).Add({}, bounds);
}

std::string label(std::string_view value) {
  return std::string(value);
}

constexpr WorkSource kAllSources[] = {WorkSource::kNotify, WorkSource::kReconcile,
                                      WorkSource::kWatch, WorkSource::kRetry};
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

std::string_view to_string(PolicyErrorReason reason) {
  switch (reason) {
    case PolicyErrorReason::list:
      return "list";
    case PolicyErrorReason::read:
      return "read";
    case PolicyErrorReason::invalid:
      return "invalid";
    case PolicyErrorReason::not_delegated:
      return "not_delegated";
    case PolicyErrorReason::write:
      return "write";
    case PolicyErrorReason::remove:
      return "remove";
    case PolicyErrorReason::audit:
      return "audit";
  }
  return "invalid";
}

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
    : registry_(std::make_shared<Registry>()),
      endpoints_labeled_family_(
          counter(*registry_, "cilium_nomad_endpoints_labeled_total",
                  "Label writes that reached their final identity, by source")),
      label_writes_family_(counter(*registry_, "cilium_nomad_label_writes_total",
                                   "Label writes sent to the Cilium agent, by API")),
      api_calls_family_(counter(*registry_, "cilium_nomad_api_calls_total",
                                "Calls to Nomad and Cilium, by target and status")),
      errors_family_(counter(*registry_, "cilium_nomad_errors_total", "Errors, by kind")),
      notifications_family_(counter(*registry_, "cilium_nomad_notifications_total",
                                    "Plugin notifications received, by op and outcome")),
      watch_reconnects_family_(counter(*registry_, "cilium_nomad_watch_reconnects_total",
                                       "Watch loop restarts, by mode")),
      policy_errors_family_(counter(*registry_, "cilium_nomad_policy_errors_total",
                                    "What kept a policy from the policy directory, by reason")),
      label_failures_family_(counter(*registry_, "cilium_nomad_label_failures_total",
                                     "Labeling attempts that did not label, by reason")),
      identity_sources_family_(
          counter(*registry_, "cilium_nomad_identity_sources_total",
                  "Where labeling attempts took the allocation's identity from, by source")),
      cni_args_relabels_(counter(*registry_, "cilium_nomad_cni_args_relabels_total",
                                 "Labels written from CNI_ARGS that Nomad's answer then "
                                 "contradicted (relabeled)")
                             .Add({})),
      cluster_leader_terms_family_(counter(*registry_, "cilium_nomad_cluster_leader_terms_total",
                                           "Times this labeler became the cluster-duty leader")),
      cluster_duty_passes_family_(counter(*registry_, "cilium_nomad_cluster_duty_passes_total",
                                          "Cluster duty passes run while leading, by duty and "
                                          "end (done, aborted, fenced_out)")),
      cluster_duty_deletions_family_(
          counter(*registry_, "cilium_nomad_cluster_duty_deletions_total",
                  "Keys the cluster duties deleted (dry_run=\"true\": would have), by duty")),
      cluster_duty_skips_family_(counter(*registry_, "cilium_nomad_cluster_duty_skips_total",
                                         "What the cluster duties left alone, by duty and "
                                         "reason")),
      identity_reports_family_(counter(*registry_, "cilium_nomad_identity_reports_total",
                                       "This node's reports of the identities it uses, put in "
                                       "etcd, by status")),
      cluster_duty_last_success_family_(
          prometheus::BuildGauge()
              .Name("cilium_nomad_cluster_duty_last_success_timestamp_seconds")
              .Help("Unix time of each cluster duty's last completed pass")
              .Register(*registry_)),
      cluster_leader_family_(prometheus::BuildGauge()
                                 .Name("cilium_nomad_cluster_leader")
                                 .Help("1 while this labeler is the cluster-duty leader")
                                 .Register(*registry_)),
      cluster_leader_info_family_(prometheus::BuildGauge()
                                      .Name("cilium_nomad_cluster_leader_info")
                                      .Help("The cluster-duty leader (holder: its node name), as "
                                            "this labeler last read the leader key")
                                      .Register(*registry_)),
      identities_family_(prometheus::BuildGauge()
                             .Name("cilium_nomad_identities")
                             .Help("Identities (master keys) in this cluster's range, as the "
                                   "leader's last identity GC pass read them")
                             .Register(*registry_)),
      identity_range_size_family_(prometheus::BuildGauge()
                                      .Name("cilium_nomad_identity_range_size")
                                      .Help("Identities this cluster's range holds (0: range "
                                            "unknown, identity GC refuses to run)")
                                      .Register(*registry_)),
      identity_users_family_(prometheus::BuildGauge()
                                 .Name("cilium_nomad_identity_users")
                                 .Help("Users (value keys) of one identity in this cluster's "
                                       "range, by stat: min, avg, max")
                                 .Register(*registry_)),
      policies_unsupported_family_(prometheus::BuildGauge()
                                       .Name("cilium_nomad_policies_unsupported")
                                       .Help("Policies not written on this node because the local "
                                             "agent runs without the option they need, by option")
                                       .Register(*registry_)),
      identities_first_seen_family_(
          counter(*registry_, "cilium_nomad_identities_first_seen_total",
                  "Identities in this cluster's range that an identity GC pass saw for the "
                  "first time")),
      in_use_reports_unreadable_family_(
          prometheus::BuildGauge()
              .Name("cilium_nomad_in_use_reports_unreadable")
              .Help("In-use reports the leader's last identity GC pass could not parse (their "
                    "nodes' identities kept by their user keys alone)")
              .Register(*registry_)),
      identity_duplicates_family_(
          prometheus::BuildGauge()
              .Name("cilium_nomad_identity_duplicates_unused")
              .Help("Identities in this cluster's range whose label string another master key "
                    "holds and that no value key names, as the leader's last identity GC pass "
                    "read them (collected by its two passes)")
              .Register(*registry_)),
      endpoints_deleted_(counter(*registry_, "cilium_nomad_endpoints_deleted_total",
                                 "Orphaned endpoints deleted with --gc-endpoints")
                             .Add({})),
      queue_depth_(
          gauge(*registry_, "cilium_nomad_queue_depth", "Allocations waiting in the work queue")),
      orphan_endpoints_(gauge(*registry_, "cilium_nomad_orphan_endpoints",
                              "Endpoints of allocations Nomad no longer runs on this node")),
      state_entries_(
          gauge(*registry_, "cilium_nomad_state_entries", "Entries in the node state file")),
      ready_(gauge(*registry_, "cilium_nomad_ready",
                   "1 when /healthz says ok: first reconcile done, neither Cilium nor Nomad "
                   "unreachable longer than "
                   "--unhealthy-after")),
      policies_applied_(gauge(*registry_, "cilium_nomad_policies_applied",
                              "Policies whose current version is in the policy directory")),
      policy_audit_endpoints_(gauge(*registry_, "cilium_nomad_policy_audit_endpoints",
                                    "Endpoints of this node the labeler put in policy audit "
                                    "mode (PolicyAuditMode Enabled)")),
      policies_invalid_(gauge(*registry_, "cilium_nomad_policies_invalid",
                              "Policies whose current version was refused (the last good file "
                              "stays)")),
      policy_last_apply_(gauge(*registry_, "cilium_nomad_policy_last_apply_timestamp_seconds",
                               "Unix time of the last policy file written or removed")),
      unlabeled_allocations_(gauge(*registry_, "cilium_nomad_unlabeled_allocations",
                                   "Allocations of this node whose endpoint does not carry its "
                                   "final labels yet")),
      unlabeled_oldest_seconds_(
          gauge(*registry_, "cilium_nomad_unlabeled_oldest_seconds",
                "How long the allocation waiting longest for its labels has waited (0: none)")),
      alloc_cache_entries_(gauge(*registry_, "cilium_nomad_alloc_cache_entries",
                                 "Allocations of this node the watch's cache can label without "
                                 "asking Nomad")),
      add_to_labeled_(
          histogram(*registry_, "cilium_nomad_add_to_labeled_seconds",
                    "Time from the plugin's ADD to the endpoint carrying its final identity",
                    {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60})),
      reconcile_duration_(histogram(*registry_, "cilium_nomad_reconcile_duration_seconds",
                                    "Duration of full reconciliations",
                                    {0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30})) {
  // Every series whose labels are known before anything happens, so it is scraped as 0.
  for (WorkSource source : kAllSources) endpoints_labeled(source);
  label_writes(LabelWriteApi::endpoint);
  label_writes(LabelWriteApi::labels);
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
  for (PolicyErrorReason reason : kAllPolicyErrorReasons) policy_errors(reason);
  for (const auto& row : cilium::agent_option_table()) policies_unsupported(row.flag);
  for (LabelFailure reason : kAllLabelFailures) label_failures(reason);
  for (IdentitySource source : kAllIdentitySources) identity_sources(source);
}

void Metrics::init_cluster_duty_series() {
  using cluster::DutyName;
  for (DutyName duty : cluster::kAllDutyNames) {
    for (cluster::PassEnd end : cluster::kAllPassEnds) cluster_duty_passes(duty, end);
    cluster_duty_last_success(duty);
    if (cluster::deletes_keys(duty)) cluster_duty_deletions(duty, false);
    for (cluster::SkipReason reason : cluster::kAllSkipReasons)
      if (cluster::skips_for(duty, reason)) cluster_duty_skips(duty, reason);
  }
  identity_reports(true);
  identity_reports(false);
  cluster_leader();
  cluster_leader_terms();
  identities();
  identity_range_size();
  for (std::string_view stat : {"min", "avg", "max"}) identity_users(stat);
  identities_first_seen();
  in_use_reports_unreadable();
  identity_duplicates_unused();
}

Gauge& Metrics::policies_unsupported(std::string_view option) {
  return policies_unsupported_family_.Add({{"option", std::string(option)}});
}

Gauge& Metrics::identity_users(std::string_view stat) {
  return identity_users_family_.Add({{"stat", std::string(stat)}});
}

Counter& Metrics::cluster_duty_passes(cluster::DutyName duty, cluster::PassEnd end) {
  return cluster_duty_passes_family_.Add(
      {{"duty", label(cluster::to_string(duty))}, {"end", label(cluster::to_string(end))}});
}

Counter& Metrics::cluster_duty_deletions(cluster::DutyName duty, bool dry_run) {
  return cluster_duty_deletions_family_.Add(
      {{"duty", label(cluster::to_string(duty))}, {"dry_run", dry_run ? "true" : "false"}});
}

Counter& Metrics::cluster_duty_skips(cluster::DutyName duty, cluster::SkipReason reason) {
  return cluster_duty_skips_family_.Add(
      {{"duty", label(cluster::to_string(duty))}, {"reason", label(cluster::to_string(reason))}});
}

Counter& Metrics::identity_reports(bool ok) {
  return identity_reports_family_.Add({{"status", ok ? "ok" : "error"}});
}

Gauge& Metrics::cluster_duty_last_success(cluster::DutyName duty) {
  return cluster_duty_last_success_family_.Add({{"duty", label(cluster::to_string(duty))}});
}

void Metrics::set_cluster_leader_holder(const std::string& holder) {
  MutexLock lock(leader_info_mu_);
  if (holder == cluster_leader_holder_ && (cluster_leader_info_ != nullptr) == !holder.empty())
    return;
  if (cluster_leader_info_ != nullptr) cluster_leader_info_family_.Remove(cluster_leader_info_);
  cluster_leader_info_ = nullptr;
  cluster_leader_holder_ = holder;
  if (holder.empty()) return;
  cluster_leader_info_ = &cluster_leader_info_family_.Add({{"holder", holder}});
  cluster_leader_info_->Set(1);
}

Counter& Metrics::endpoints_labeled(WorkSource source) {
  return endpoints_labeled_family_.Add({{"source", label(to_string(source))}});
}

Counter& Metrics::label_writes(LabelWriteApi api) {
  return label_writes_family_.Add({{"api", label(to_string(api))}});
}

Counter& Metrics::api_calls(Peer target, std::optional<ErrorKind> error) {
  return api_calls_family_.Add({{"target", target == Peer::nomad ? "nomad" : "cilium"},
                                {"status", error ? label(to_string(*error)) : "ok"}});
}

Counter& Metrics::errors(ErrorKindLabel kind) {
  return errors_family_.Add({{"kind", label(to_string(kind))}});
}

Counter& Metrics::policy_errors(PolicyErrorReason reason) {
  return policy_errors_family_.Add({{"reason", label(to_string(reason))}});
}

Counter& Metrics::label_failures(LabelFailure reason) {
  return label_failures_family_.Add({{"reason", label(to_string(reason))}});
}

Counter& Metrics::identity_sources(IdentitySource source) {
  return identity_sources_family_.Add({{"source", label(to_string(source))}});
}

Counter& Metrics::notifications(std::optional<notify::Op> op, NotifyOutcome outcome) {
  return notifications_family_.Add({{"op", op ? label(notify::to_string(*op)) : "unknown"},
                                    {"outcome", label(to_string(outcome))}});
}

Counter& Metrics::watch_reconnects(WatchMode mode) {
  return watch_reconnects_family_.Add({{"mode", to_string(mode)}});
}

std::string Metrics::render() const {
  if (before_render_) before_render_();
  return prometheus::TextSerializer().Serialize(registry_->Collect());
}

}  // namespace cn::labeler
