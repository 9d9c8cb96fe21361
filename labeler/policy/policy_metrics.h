#pragma once
// The policy distributor's and auditor's metrics, owned by them and registered on the labeler's
// one registry (labeler/serve/metrics.h).
#include <string_view>

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>

namespace cn::labeler {

// cilium_nomad_policy_errors_total{reason}: what kept a policy from the directory.
enum class PolicyErrorReason {
  list,           // the variable list failed
  read,           // a variable could not be read
  invalid,        // a policy was refused (validation, size, count, name)
  not_delegated,  // its variable's namespace may not write it (docs/policies.md "Delegation")
  write,          // the directory could not be listed or a file written
  remove,         // a file of a deleted variable could not be removed
  audit,          // an endpoint's PolicyAuditMode could not be read or set (retried)
};
inline constexpr PolicyErrorReason kAllPolicyErrorReasons[] = {
    PolicyErrorReason::list,          PolicyErrorReason::read,  PolicyErrorReason::invalid,
    PolicyErrorReason::not_delegated, PolicyErrorReason::write, PolicyErrorReason::remove,
    PolicyErrorReason::audit};
std::string_view to_string(PolicyErrorReason reason);

class PolicyMetrics {
 public:
  explicit PolicyMetrics(prometheus::Registry& registry);
  PolicyMetrics(const PolicyMetrics&) = delete;
  PolicyMetrics& operator=(const PolicyMetrics&) = delete;

  prometheus::Counter& policy_errors(PolicyErrorReason reason);
  prometheus::Gauge& policies_applied() { return policies_applied_; }
  prometheus::Gauge& policy_audit_endpoints() { return policy_audit_endpoints_; }
  prometheus::Gauge& policies_invalid() { return policies_invalid_; }
  prometheus::Gauge& policy_last_apply_timestamp() { return policy_last_apply_; }
  // cilium_nomad_policies_unsupported{option}: policies not written on this node because its
  // agent runs without `option` (an agent flag name, e.g. enable-node-selector-labels).
  prometheus::Gauge& policies_unsupported(std::string_view option);

 private:
  prometheus::Family<prometheus::Counter>& policy_errors_family_;
  prometheus::Family<prometheus::Gauge>& policies_unsupported_family_;
  prometheus::Gauge& policies_applied_;
  prometheus::Gauge& policy_audit_endpoints_;
  prometheus::Gauge& policies_invalid_;
  prometheus::Gauge& policy_last_apply_;
};

}  // namespace cn::labeler
