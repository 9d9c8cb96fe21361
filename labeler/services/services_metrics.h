#pragma once
// The services feature's metrics, owned by it and registered on the labeler's one registry
// (labeler/serve/metrics.h).
#include <string_view>

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>

namespace cn::labeler {

class ServicesMetrics {
 public:
  explicit ServicesMetrics(prometheus::Registry& registry);
  ServicesMetrics(const ServicesMetrics&) = delete;
  ServicesMetrics& operator=(const ServicesMetrics&) = delete;

  // cilium_nomad_services{state="served|left_out"}
  prometheus::Gauge& services(std::string_view state);
  // cilium_nomad_service_backends{state="ready|not_ready|left_out"}
  prometheus::Gauge& service_backends(std::string_view state);
  // cilium_nomad_services_passes_total{result="ok|error"}
  prometheus::Counter& services_passes(bool ok);
  prometheus::Gauge& services_last_write_timestamp() { return last_write_; }

 private:
  prometheus::Family<prometheus::Gauge>& services_family_;
  prometheus::Family<prometheus::Gauge>& backends_family_;
  prometheus::Family<prometheus::Counter>& passes_family_;
  prometheus::Gauge& last_write_;
};

}  // namespace cn::labeler
