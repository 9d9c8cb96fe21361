#pragma once
// Why labeling an allocation did not succeed: the one fixed set behind the state entry's
// `last_attempt.reason` (shown by `state` and `explain`) and the `reason` label of
// cilium_nomad_label_failures_total. Values are stable names: alerts and tools match on them.
#include <string_view>

namespace cn::labeler {

enum class LabelFailure {
  nomad_unreachable,      // Nomad did not answer usefully (refused, timeout, TLS, 5xx)
  nomad_access_denied,    // 401/403, or an ACL that hides the allocation's namespace
  nomad_alloc_unknown,    // Nomad has no such allocation
  nomad_answer_unusable,  // an answer about another allocation, or one labels cannot come from
  alloc_terminal,         // the allocation stopped before its endpoint was labeled
  endpoint_not_found,     // the agent shows no endpoint for the allocation (yet), or it vanished
  endpoint_unusable,      // the endpoint is the agent's own (host, health) or its ID is unusable
  labels_filtered,        // the agent's --labels filter drops nomad: labels
  label_write_refused,    // the agent answered the label write with an error
  write_slots_busy,       // every label write slot waits in the agent's endpoint-patch limiter
  agent_unreachable,      // the Cilium agent did not answer (refused, timeout, TLS, 5xx)
  agent_error,            // the agent answered a lookup with an error or an unusable body
  identity_pending,       // labels written, identity not resolved within the item's budget
  state_write,            // labeled, but the state file could not be written
};

inline constexpr LabelFailure kAllLabelFailures[] = {
    LabelFailure::nomad_unreachable,   LabelFailure::nomad_access_denied,
    LabelFailure::nomad_alloc_unknown, LabelFailure::nomad_answer_unusable,
    LabelFailure::alloc_terminal,      LabelFailure::endpoint_not_found,
    LabelFailure::endpoint_unusable,   LabelFailure::labels_filtered,
    LabelFailure::label_write_refused, LabelFailure::write_slots_busy,
    LabelFailure::agent_unreachable,   LabelFailure::agent_error,
    LabelFailure::identity_pending,    LabelFailure::state_write,
};

std::string_view to_string(LabelFailure failure);

// The detail recorded with labels_filtered, wherever the labeler finds it (a worker's write, a
// reconcile's look at the endpoint): the one trap an operator cannot see from the endpoint alone.
inline constexpr std::string_view kLabelsFilteredDetail =
    "the agent's --labels filter drops nomad: labels; add \"nomad:.*\" to its --labels";

}  // namespace cn::labeler
