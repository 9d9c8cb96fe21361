// The metrics a fresh labeler exposes: every family declared once, counters named *_total, and
// every series whose labels are known in advance already present at 0 (alerts need a baseline).
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>

#include <prometheus/metric_family.h>

#include "labeler/serve/metrics.h"

namespace cn::labeler {
namespace {

// The value of one series as the registry hands it to the serializer, or nullopt when absent:
// reads through Collect(), so it sees what a scrape would, without creating anything.
std::optional<double> collected(const Metrics& metrics, const std::string& family,
                                const prometheus::Labels& labels) {
  for (const auto& f : metrics.registry().Collect()) {
    if (f.name != family) continue;
    for (const auto& m : f.metric) {
      prometheus::Labels have;
      for (const auto& l : m.label) have[l.name] = l.value;
      if (have != labels) continue;
      switch (f.type) {
        case prometheus::MetricType::Counter:
          return m.counter.value;
        case prometheus::MetricType::Gauge:
          return m.gauge.value;
        case prometheus::MetricType::Histogram:
          return static_cast<double>(m.histogram.sample_count);
        default:
          return std::nullopt;
      }
    }
  }
  return std::nullopt;
}

// Expected: before anything happens, every error kind, every source, both write APIs, both
// targets' successful calls and every notification outcome are scraped as 0.
TEST(Metrics, SeriesWithKnownLabelsExistAtZeroFromTheStart) {
  const Metrics metrics;
  for (ErrorKindLabel kind : kAllErrorKindLabels) {
    EXPECT_EQ(
        collected(metrics, "cilium_nomad_errors_total", {{"kind", std::string(to_string(kind))}}),
        0.0)
        << to_string(kind);
  }
  for (const char* target : {"nomad", "cilium"}) {
    EXPECT_EQ(
        collected(metrics, "cilium_nomad_api_calls_total", {{"target", target}, {"status", "ok"}}),
        0.0)
        << target;
  }
  for (const char* source : {"notify", "reconcile", "watch", "retry"}) {
    EXPECT_EQ(collected(metrics, "cilium_nomad_endpoints_labeled_total", {{"source", source}}), 0.0)
        << source;
  }
  for (const char* api : {"endpoint", "labels"}) {
    EXPECT_EQ(collected(metrics, "cilium_nomad_label_writes_total", {{"api", api}}), 0.0) << api;
  }
  for (const char* op : {"add", "del", "check"}) {
    EXPECT_EQ(collected(metrics, "cilium_nomad_notifications_total",
                        {{"op", op}, {"outcome", "accepted"}}),
              0.0)
        << op;
  }
  for (const char* outcome : {"invalid", "refused_peer", "unreadable"}) {
    EXPECT_EQ(collected(metrics, "cilium_nomad_notifications_total",
                        {{"op", "unknown"}, {"outcome", outcome}}),
              0.0)
        << outcome;
  }
  for (const char* mode : {"node", "events"}) {
    EXPECT_EQ(collected(metrics, "cilium_nomad_watch_reconnects_total", {{"mode", mode}}), 0.0)
        << mode;
  }
  for (LabelFailure reason : kAllLabelFailures) {
    EXPECT_EQ(collected(metrics, "cilium_nomad_label_failures_total",
                        {{"reason", std::string(to_string(reason))}}),
              0.0)
        << to_string(reason);
  }
  for (const char* single :
       {"cilium_nomad_endpoints_deleted_total", "cilium_nomad_queue_depth",
        "cilium_nomad_unlabeled_allocations", "cilium_nomad_unlabeled_oldest_seconds",
        "cilium_nomad_orphan_endpoints", "cilium_nomad_state_entries", "cilium_nomad_ready",
        "cilium_nomad_add_to_labeled_seconds", "cilium_nomad_reconcile_duration_seconds"}) {
    EXPECT_EQ(collected(metrics, single, {}), 0.0) << single;
  }
}

// Expected: the families the README documents, with their types; counters end in _total and
// histograms in _seconds (Prometheus naming), and nothing else is exposed.
TEST(Metrics, FamiliesAreTheDocumentedOnes) {
  const Metrics metrics;
  std::map<std::string, prometheus::MetricType> families;
  for (const auto& f : metrics.registry().Collect()) families[f.name] = f.type;
  using T = prometheus::MetricType;
  const std::map<std::string, prometheus::MetricType> documented = {
      {"cilium_nomad_endpoints_labeled_total", T::Counter},
      {"cilium_nomad_services", T::Gauge},
      {"cilium_nomad_service_backends", T::Gauge},
      {"cilium_nomad_services_passes_total", T::Counter},
      {"cilium_nomad_services_last_write_timestamp_seconds", T::Gauge},
      {"cilium_nomad_label_writes_total", T::Counter},
      {"cilium_nomad_api_calls_total", T::Counter},
      {"cilium_nomad_errors_total", T::Counter},
      {"cilium_nomad_notifications_total", T::Counter},
      {"cilium_nomad_watch_reconnects_total", T::Counter},
      {"cilium_nomad_endpoints_deleted_total", T::Counter},
      {"cilium_nomad_policy_errors_total", T::Counter},
      {"cilium_nomad_label_failures_total", T::Counter},
      {"cilium_nomad_identity_sources_total", T::Counter},
      {"cilium_nomad_cni_args_relabels_total", T::Counter},
      {"cilium_nomad_queue_depth", T::Gauge},
      {"cilium_nomad_orphan_endpoints", T::Gauge},
      {"cilium_nomad_state_entries", T::Gauge},
      {"cilium_nomad_ready", T::Gauge},
      {"cilium_nomad_policies_applied", T::Gauge},
      {"cilium_nomad_policy_audit_endpoints", T::Gauge},
      {"cilium_nomad_policies_invalid", T::Gauge},
      {"cilium_nomad_policies_unsupported", T::Gauge},
      {"cilium_nomad_policy_last_apply_timestamp_seconds", T::Gauge},
      {"cilium_nomad_unlabeled_allocations", T::Gauge},
      {"cilium_nomad_unlabeled_oldest_seconds", T::Gauge},
      {"cilium_nomad_alloc_cache_entries", T::Gauge},
      {"cilium_nomad_add_to_labeled_seconds", T::Histogram},
      {"cilium_nomad_reconcile_duration_seconds", T::Histogram},
  };
  EXPECT_EQ(families, documented);
}

// Expected: with the cluster duties configured, their families appear at 0 (README, "Cluster
// duties"), one series per duty and end; the leader's info series only once a leader is known.
TEST(Metrics, ClusterDutyFamiliesAppearOnlyWhenConfigured) {
  Metrics metrics;
  metrics.init_cluster_duty_series();
  std::map<std::string, std::size_t> series;
  for (const auto& f : metrics.registry().Collect())
    if (f.name.starts_with("cilium_nomad_cluster") ||
        f.name == "cilium_nomad_identity_reports_total")
      series[f.name] = f.metric.size();
  const std::map<std::string, std::size_t> expected = {
      {"cilium_nomad_cluster_leader", 1},
      {"cilium_nomad_cluster_leader_terms_total", 1},
      {"cilium_nomad_cluster_duty_passes_total", 6 * 6},
      {"cilium_nomad_cluster_duty_deletions_total", 4},
      // unknown_shape, changed, doubt for the four that delete; never_listed, over_cap for
      // node_reaping and ip_gc; changed, not_ours for cluster_config
      {"cilium_nomad_cluster_duty_skips_total", 4 * 3 + 2 + 2 + 2},
      {"cilium_nomad_cluster_duty_last_success_timestamp_seconds", 6},
      {"cilium_nomad_identity_reports_total", 2},
  };
  EXPECT_EQ(series, expected);
  metrics.set_cluster_leader_holder("node-a");
  metrics.set_cluster_leader_holder("node-b");
  const std::string text = metrics.render();
  EXPECT_NE(text.find("cilium_nomad_cluster_leader_info{holder=\"node-b\"} 1"), std::string::npos);
  EXPECT_EQ(text.find("holder=\"node-a\""), std::string::npos) << "the old leader's series stays";
  metrics.set_cluster_leader_holder("");
  EXPECT_EQ(metrics.render().find("cilium_nomad_cluster_leader_info{"), std::string::npos);
}

// Expected: a typed accessor moves exactly its own series, and the text exposition shows it
// with the label scheme of the README (status is "ok" or the error kind's name).
TEST(Metrics, TypedAccessorsCountTheirOwnSeriesOnly) {
  Metrics metrics;
  metrics.api_calls(Peer::cilium, std::nullopt).Increment();
  metrics.api_calls(Peer::nomad, ErrorKind::timeout).Increment();
  metrics.api_calls(Peer::nomad, ErrorKind::timeout).Increment();
  metrics.errors(ErrorKindLabel::state_write).Increment();
  metrics.notifications(notify::Op::kDel, NotifyOutcome::accepted).Increment();
  metrics.queue_depth().Set(7);
  metrics.reconcile_duration_seconds().Observe(0.3);

  EXPECT_EQ(
      collected(metrics, "cilium_nomad_api_calls_total", {{"target", "cilium"}, {"status", "ok"}}),
      1.0);
  EXPECT_EQ(collected(metrics, "cilium_nomad_api_calls_total",
                      {{"target", "nomad"}, {"status", "timeout"}}),
            2.0);
  EXPECT_EQ(
      collected(metrics, "cilium_nomad_api_calls_total", {{"target", "nomad"}, {"status", "ok"}}),
      0.0);
  EXPECT_EQ(metrics.errors(ErrorKindLabel::state_write).Value(), 1);
  EXPECT_EQ(metrics.errors(ErrorKindLabel::label_write).Value(), 0);
  EXPECT_EQ(collected(metrics, "cilium_nomad_notifications_total",
                      {{"op", "del"}, {"outcome", "accepted"}}),
            1.0);
  EXPECT_EQ(collected(metrics, "cilium_nomad_reconcile_duration_seconds", {}), 1.0);

  const std::string text = metrics.render();
  for (const char* line :
       {"# TYPE cilium_nomad_api_calls_total counter\n",
        "cilium_nomad_api_calls_total{status=\"timeout\",target=\"nomad\"} 2\n",
        "cilium_nomad_errors_total{kind=\"state_write\"} 1\n", "cilium_nomad_queue_depth 7\n",
        "cilium_nomad_reconcile_duration_seconds_bucket{le=\"0.5\"} 1\n",
        "cilium_nomad_reconcile_duration_seconds_bucket{le=\"0.25\"} 0\n"}) {
    EXPECT_NE(text.find(line), std::string::npos) << line << "not in:\n" << text;
  }
}

}  // namespace
}  // namespace cn::labeler
