#include "labeler/cluster/cluster_metrics.h"

#include "labeler/serve/metric_families.h"

namespace cn::labeler {

using prometheus::Counter;
using prometheus::Gauge;

ClusterMetrics::ClusterMetrics(prometheus::Registry& registry)
    : cluster_leader_terms_family_(
          metric_families::counter(registry, "cilium_nomad_cluster_leader_terms_total",
                                   "Times this labeler became the cluster-duty leader")),
      cluster_duty_passes_family_(
          metric_families::counter(registry, "cilium_nomad_cluster_duty_passes_total",
                                   "Cluster duty passes run while leading, by duty and "
                                   "end (done, aborted, fenced_out)")),
      cluster_duty_deletions_family_(metric_families::counter(
          registry, "cilium_nomad_cluster_duty_deletions_total",
          "Keys the cluster duties deleted (dry_run=\"true\": would have), by duty")),
      cluster_duty_skips_family_(
          metric_families::counter(registry, "cilium_nomad_cluster_duty_skips_total",
                                   "What the cluster duties left alone, by duty and "
                                   "reason")),
      identity_reports_family_(
          metric_families::counter(registry, "cilium_nomad_identity_reports_total",
                                   "This node's reports of the identities it uses, put in "
                                   "etcd, by status")),
      cluster_duty_last_success_family_(metric_families::gauges(
          registry, "cilium_nomad_cluster_duty_last_success_timestamp_seconds",
          "Unix time of each cluster duty's last completed pass")),
      cluster_leader_family_(
          metric_families::gauges(registry, "cilium_nomad_cluster_leader",
                                  "1 while this labeler is the cluster-duty leader")),
      cluster_leader_info_family_(
          metric_families::gauges(registry, "cilium_nomad_cluster_leader_info",
                                  "The cluster-duty leader (holder: its node name), as "
                                  "this labeler last read the leader key")),
      identities_family_(
          metric_families::gauges(registry, "cilium_nomad_identities",
                                  "Identities (master keys) in this cluster's range, as the "
                                  "leader's last identity GC pass read them")),
      identity_range_size_family_(
          metric_families::gauges(registry, "cilium_nomad_identity_range_size",
                                  "Identities this cluster's range holds (0: range "
                                  "unknown, identity GC refuses to run)")),
      identity_users_family_(
          metric_families::gauges(registry, "cilium_nomad_identity_users",
                                  "Users (value keys) of one identity in this cluster's "
                                  "range, by stat: min, avg, max")),
      identities_first_seen_family_(metric_families::counter(
          registry, "cilium_nomad_identities_first_seen_total",
          "Identities in this cluster's range that an identity GC pass saw for the "
          "first time")),
      in_use_reports_unreadable_family_(metric_families::gauges(
          registry, "cilium_nomad_in_use_reports_unreadable",
          "In-use reports the leader's last identity GC pass could not parse (their "
          "nodes' identities kept by their user keys alone)")),
      identity_duplicates_family_(metric_families::gauges(
          registry, "cilium_nomad_identity_duplicates_unused",
          "Identities in this cluster's range whose label string another master key "
          "holds and that no value key names, as the leader's last identity GC pass "
          "read them (collected by its two passes)")) {}

void ClusterMetrics::init_cluster_duty_series() {
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

Gauge& ClusterMetrics::identity_users(std::string_view stat) {
  return identity_users_family_.Add({{"stat", std::string(stat)}});
}

Counter& ClusterMetrics::cluster_duty_passes(cluster::DutyName duty, cluster::PassEnd end) {
  return cluster_duty_passes_family_.Add(
      {{"duty", metric_families::label(cluster::to_string(duty))},
       {"end", metric_families::label(cluster::to_string(end))}});
}

Counter& ClusterMetrics::cluster_duty_deletions(cluster::DutyName duty, bool dry_run) {
  return cluster_duty_deletions_family_.Add(
      {{"duty", metric_families::label(cluster::to_string(duty))},
       {"dry_run", dry_run ? "true" : "false"}});
}

Counter& ClusterMetrics::cluster_duty_skips(cluster::DutyName duty, cluster::SkipReason reason) {
  return cluster_duty_skips_family_.Add(
      {{"duty", metric_families::label(cluster::to_string(duty))},
       {"reason", metric_families::label(cluster::to_string(reason))}});
}

Counter& ClusterMetrics::identity_reports(bool ok) {
  return identity_reports_family_.Add({{"status", ok ? "ok" : "error"}});
}

Gauge& ClusterMetrics::cluster_duty_last_success(cluster::DutyName duty) {
  return cluster_duty_last_success_family_.Add(
      {{"duty", metric_families::label(cluster::to_string(duty))}});
}

void ClusterMetrics::set_cluster_leader_holder(const std::string& holder) {
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

}  // namespace cn::labeler
