#include "common/cilium/model/label_write_plan.h"

#include <algorithm>

#include "common/labels/derive_labels.h"
#include "common/util/join.h"

namespace cn::cilium {

LabelWritePlan plan_label_write(const Endpoint& current, const labels::LabelSet& desired) {
  LabelWritePlan plan;
  if (is_reserved_only(current)) {
    plan.action = LabelWriteAction::skip_reserved;
    plan.reason = "reserved endpoint (identity " + std::to_string(current.identity_id) + ")";
    return plan;
  }

  const labels::LabelSet identity = identity_labels(current);
  for (const auto& label : desired) {
    if (!identity.contains(label)) plan.missing.push_back(label.to_string());
  }
  for (const auto& label : identity) {
    if (labels::is_ours(label) && !desired.contains(label)) plan.stale.push_back(label.to_string());
  }
  const bool init = is_init(current);

  if (!init && plan.missing.empty() && plan.stale.empty()) {
    plan.reason = "identity already matches";
    return plan;
  }

  const labels::LabelSet derived = labels::LabelSet::from_strings(current.derived_labels);
  const bool all_missing_derived =
      !plan.missing.empty() &&
      std::all_of(desired.begin(), desired.end(), [&](const labels::Label& l) {
        return identity.contains(l) || derived.contains(l);
      });
  if (all_missing_derived) {
    plan.action = LabelWriteAction::filtered;
    plan.reason = "agent label filter demoted to derived: " + join(plan.missing, ", ");
    return plan;
  }

  plan.action = LabelWriteAction::write;
  if (init) {
    plan.reason = "identity still reserved:init";
  } else {
    plan.reason = "identity differs";
  }
  if (!plan.missing.empty()) plan.reason += "; missing " + join(plan.missing, ", ");
  if (!plan.stale.empty()) plan.reason += "; stale " + join(plan.stale, ", ");
  return plan;
}

bool labels_written_pending(const Endpoint& current, const labels::LabelSet& desired) {
  auto pending = labels::LabelSet::from_strings(current.security_relevant_labels);
  return labels::only_ours(pending) == desired && !pending.has_source(labels::kSourceReserved);
}

}  // namespace cn::cilium
