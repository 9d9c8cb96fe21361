#pragma once
// How every metric part of the labeler registers its families on the one registry, so that the
// parts (labeling, policy, cluster duties, serving) build them the same way.
#include <string>
#include <string_view>

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

namespace cn::labeler::metric_families {

inline prometheus::Family<prometheus::Counter>& counter(prometheus::Registry& registry,
                                                        const char* name, const char* help) {
  return prometheus::BuildCounter().Name(name).Help(help).Register(registry);
}

inline prometheus::Family<prometheus::Gauge>& gauges(prometheus::Registry& registry,
                                                     const char* name, const char* help) {
  return prometheus::BuildGauge().Name(name).Help(help).Register(registry);
}

// A family with one series and no labels.
inline prometheus::Gauge& gauge(prometheus::Registry& registry, const char* name,
                                const char* help) {
  return gauges(registry, name, help).Add({});
}

inline prometheus::Histogram& histogram(prometheus::Registry& registry, const char* name,
                                        const char* help,
                                        const prometheus::Histogram::BucketBoundaries& bounds) {
  return prometheus::BuildHistogram().Name(name).Help(help).Register(registry).Add({}, bounds);
}

inline std::string label(std::string_view value) {
  return std::string(value);
}

}  // namespace cn::labeler::metric_families
