#include "labeler/policy/policy_metrics.h"

#include <string>

#include "common/cilium/model/agent_options.h"
#include "labeler/serve/metric_families.h"

namespace cn::labeler {

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

PolicyMetrics::PolicyMetrics(prometheus::Registry& registry)
    : policy_errors_family_(
          metric_families::counter(registry, "cilium_nomad_policy_errors_total",
                                   "What kept a policy from the policy directory, by reason")),
      policies_unsupported_family_(
          metric_families::gauges(registry, "cilium_nomad_policies_unsupported",
                                  "Policies not written on this node because the local agent "
                                  "runs without the option they need, by option")),
      policies_applied_(
          metric_families::gauge(registry, "cilium_nomad_policies_applied",
                                 "Policies whose current version is in the policy directory")),
      policy_audit_endpoints_(
          metric_families::gauge(registry, "cilium_nomad_policy_audit_endpoints",
                                 "Endpoints of this node the labeler put in policy audit mode "
                                 "(PolicyAuditMode Enabled)")),
      policies_invalid_(metric_families::gauge(registry, "cilium_nomad_policies_invalid",
                                               "Policies whose current version was refused (the "
                                               "last good file stays)")),
      policy_last_apply_(
          metric_families::gauge(registry, "cilium_nomad_policy_last_apply_timestamp_seconds",
                                 "Unix time of the last policy file written or removed")) {
  for (PolicyErrorReason reason : kAllPolicyErrorReasons) policy_errors(reason);
  for (const auto& row : cilium::agent_option_table()) policies_unsupported(row.flag);
}

prometheus::Counter& PolicyMetrics::policy_errors(PolicyErrorReason reason) {
  return policy_errors_family_.Add({{"reason", metric_families::label(to_string(reason))}});
}

prometheus::Gauge& PolicyMetrics::policies_unsupported(std::string_view option) {
  return policies_unsupported_family_.Add({{"option", std::string(option)}});
}

}  // namespace cn::labeler
