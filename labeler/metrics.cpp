#include "labeler/metrics.h"

#include <cstdio>
#include <cstdlib>

namespace cn::labeler {
namespace {

// The shortest text that reads back as the same double: `le="0.025"`, not 0.025000000000000001.
std::string number(double v) {
  char buf[64];
  for (int precision = 6; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  return buf;
}

// Every family the labeler exposes, declared once so that /metrics shows them from the start.
const std::map<std::string, std::pair<std::string, std::string>>& declared() {
  static const std::map<std::string, std::pair<std::string, std::string>> families = {
      {"cilium_nomad_endpoints_labeled_total", {"counter", "Label writes that reached their final identity, by source"}},
      {"cilium_nomad_label_writes_total", {"counter", "Label writes sent to the Cilium agent, by API"}},
      {"cilium_nomad_api_calls_total", {"counter", "Calls to Nomad and Cilium, by target and status"}},
      {"cilium_nomad_errors_total", {"counter", "Errors, by kind"}},
      {"cilium_nomad_notifications_total", {"counter", "Plugin notifications received, by op and outcome"}},
      {"cilium_nomad_watch_reconnects_total", {"counter", "Watch loop restarts, by mode"}},
      {"cilium_nomad_endpoints_deleted_total", {"counter", "Orphaned endpoints deleted with --gc-endpoints"}},
      {"cilium_nomad_queue_depth", {"gauge", "Allocations waiting in the work queue"}},
      {"cilium_nomad_orphan_endpoints", {"gauge", "Endpoints of allocations Nomad no longer runs on this node"}},
      {"cilium_nomad_state_entries", {"gauge", "Entries in the node state file"}},
      {"cilium_nomad_ready", {"gauge", "1 when /healthz says ok: first reconcile done, neither Cilium nor Nomad unreachable longer than --unhealthy-after"}},
  };
  return families;
}

}  // namespace

Histogram::Histogram(std::vector<double> bounds) : bounds_(std::move(bounds)), buckets_(bounds_.size(), 0) {}

void Histogram::observe(double value) {
  std::lock_guard lock(mu_);
  for (std::size_t i = 0; i < bounds_.size(); ++i) {
    if (value <= bounds_[i]) {
      ++buckets_[i];
      break;
    }
  }
  sum_ += value;
  ++count_;
}

std::string Histogram::render(const std::string& name, const std::string& help) const {
  std::lock_guard lock(mu_);
  std::string out = "# HELP " + name + " " + help + "\n# TYPE " + name + " histogram\n";
  unsigned long long cumulative = 0;
  for (std::size_t i = 0; i < bounds_.size(); ++i) {
    cumulative += buckets_[i];
    out += name + "_bucket{le=\"" + number(bounds_[i]) + "\"} " + std::to_string(cumulative) + "\n";
  }
  out += name + "_bucket{le=\"+Inf\"} " + std::to_string(count_) + "\n";
  out += name + "_sum " + number(sum_) + "\n" + name + "_count " + std::to_string(count_) + "\n";
  return out;
}

Metrics::Metrics()
    : add_to_labels_({0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}),
      reconcile_({0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30}) {
  for (const auto& [name, meta] : declared()) {
    families_[name] = Family{meta.second, meta.first, {}};
  }
}

void Metrics::inc(const std::string& name, const std::string& labels, double by) {
  std::lock_guard lock(mu_);
  families_[name].series[labels] += by;
}

void Metrics::set(const std::string& name, double value, const std::string& labels) {
  std::lock_guard lock(mu_);
  families_[name].series[labels] = value;
}

double Metrics::get(const std::string& name, const std::string& labels) const {
  std::lock_guard lock(mu_);
  auto f = families_.find(name);
  if (f == families_.end()) return 0;
  auto s = f->second.series.find(labels);
  return s == f->second.series.end() ? 0 : s->second;
}

std::string Metrics::render() const {
  std::string out;
  {
    std::lock_guard lock(mu_);
    for (const auto& [name, family] : families_) {
      out += "# HELP " + name + " " + family.help + "\n# TYPE " + name + " " +
             (family.type.empty() ? "untyped" : family.type) + "\n";
      if (family.series.empty() && family.type == "gauge") out += name + " 0\n";
      for (const auto& [labels, value] : family.series) {
        out += name + (labels.empty() ? "" : "{" + labels + "}") + " " + number(value) + "\n";
      }
    }
  }
  out += add_to_labels_.render("cilium_nomad_add_to_labeled_seconds",
                               "Time from the plugin's ADD to the endpoint carrying its final identity");
  out += reconcile_.render("cilium_nomad_reconcile_duration_seconds", "Duration of full reconciliations");
  return out;
}

}  // namespace cn::labeler
