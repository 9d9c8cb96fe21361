#pragma once
// The labeler's counters, gauges and histograms, rendered as Prometheus text exposition
// (prometheus-cpp is not packaged for Debian 12, so this small registry replaces it).
// Thread-safe; label values are bounded by construction (targets, statuses, kinds), never
// per-allocation.
#include <array>
#include <atomic>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace cn::labeler {

class Histogram {
 public:
  explicit Histogram(std::vector<double> bounds);
  void observe(double value);
  std::string render(const std::string& name, const std::string& help) const;

 private:
  std::vector<double> bounds_;
  mutable std::mutex mu_;
  std::vector<unsigned long long> buckets_;  // cumulative on render
  double sum_ = 0;
  unsigned long long count_ = 0;
};

class Metrics {
 public:
  Metrics();

  // Counters with one label each, e.g. inc("api_calls_total", "target=\"nomad\",status=\"200\"").
  void inc(const std::string& name, const std::string& labels = {}, double by = 1);
  void set(const std::string& name, double value, const std::string& labels = {});
  double get(const std::string& name, const std::string& labels = {}) const;

  Histogram& add_to_labels_seconds() { return add_to_labels_; }
  Histogram& reconcile_seconds() { return reconcile_; }

  std::string render() const;

 private:
  struct Family {
    std::string help;
    std::string type;
    std::map<std::string, double> series;
  };
  mutable std::mutex mu_;
  std::map<std::string, Family> families_;
  Histogram add_to_labels_;
  Histogram reconcile_;
};

}  // namespace cn::labeler
