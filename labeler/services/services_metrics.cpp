#include "labeler/services/services_metrics.h"

#include <string>

#include "labeler/serve/metric_families.h"

namespace cn::labeler {

ServicesMetrics::ServicesMetrics(prometheus::Registry& registry)
    : services_family_(metric_families::gauges(
          registry, "cilium_nomad_services",
          "Nomad services handed to the local agent's load balancer (served) or left out")),
      backends_family_(metric_families::gauges(
          registry, "cilium_nomad_service_backends",
          "Instances of the served services: ready, not ready (checks), or left out")),
      passes_family_(metric_families::counter(
          registry, "cilium_nomad_services_passes_total",
          "Passes over Nomad's services, the VIP table and the agent's load balancer")),
      last_write_(metric_families::gauge(
          registry, "cilium_nomad_services_last_write_timestamp_seconds",
          "Unix time the agent's load balancer was last given a new set of services")) {
  for (const auto* state : {"served", "left_out"}) services(state);
  for (const auto* state : {"ready", "not_ready", "left_out"}) service_backends(state);
  services_passes(true);
  services_passes(false);
}

prometheus::Gauge& ServicesMetrics::services(std::string_view state) {
  return services_family_.Add({{"state", std::string(state)}});
}

prometheus::Gauge& ServicesMetrics::service_backends(std::string_view state) {
  return backends_family_.Add({{"state", std::string(state)}});
}

prometheus::Counter& ServicesMetrics::services_passes(bool ok) {
  return passes_family_.Add({{"result", ok ? "ok" : "error"}});
}

}  // namespace cn::labeler
