#pragma once
// The cluster duties' metrics (cilium_nomad_cluster_*, identity headroom, in-use reports), owned
// by the duties and registered on the labeler's one registry (labeler/serve/metrics.h). Every
// label value comes from the duties' closed sets (labeler/cluster/duty.h).
#include <string>
#include <string_view>

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>

#include "common/util/mutex.h"
#include "labeler/cluster/duty.h"

namespace cn::labeler {

class ClusterMetrics {
 public:
  explicit ClusterMetrics(prometheus::Registry& registry);
  ClusterMetrics(const ClusterMetrics&) = delete;
  ClusterMetrics& operator=(const ClusterMetrics&) = delete;

  // `dry_run` passes count what they would have deleted.
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

 private:
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
  prometheus::Family<prometheus::Counter>& identities_first_seen_family_;
  prometheus::Family<prometheus::Gauge>& in_use_reports_unreadable_family_;
  prometheus::Family<prometheus::Gauge>& identity_duplicates_family_;
  Mutex leader_info_mu_;
  prometheus::Gauge* cluster_leader_info_ GUARDED_BY(leader_info_mu_) = nullptr;
  std::string cluster_leader_holder_ GUARDED_BY(leader_info_mu_);
};

}  // namespace cn::labeler
