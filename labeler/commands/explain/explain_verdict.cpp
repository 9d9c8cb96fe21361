#include "labeler/commands/explain/explain_verdict.h"

#include <algorithm>
#include <optional>

#include "common/util/join.h"

namespace cn::labeler::explain {
namespace {

constexpr std::string_view kCheckNomad =
    "check --nomad-addr (or NOMAD_ADDR) and that NOMAD_TOKEN's ACL policy grants what "
    "conf-examples/acl-policy.hcl lists";
constexpr std::string_view kCheckAgent =
    "check that the agent runs and that --cilium-socket (or CILIUM_SOCK) is its API socket";
constexpr std::string_view kCheckLabeler =
    "the labeler relabels it at its next resync: check that it runs on this node (nomad job "
    "status cilium-nomad-labeler) and read its log for this allocation";

// A meta label (nomad:<key>), as opposed to the labeler's own nomad:nomad.* labels.
bool is_meta_label(const std::string& label) {
  return label.starts_with("nomad:") && !label.starts_with("nomad:nomad.");
}

bool all_meta(const std::vector<std::string>& labels) {
  return !labels.empty() && std::ranges::all_of(labels, is_meta_label);
}

// The difference is only in meta labels and nothing failed: explain's --meta-labels and the
// daemon's may differ, which relabeling would not change.
std::optional<Verdict> meta_labels_differ(const ExplainFacts& facts, const cilium::Endpoint& ep,
                                          const cilium::LabelWritePlan& plan) {
  if (facts.last_attempt) return std::nullopt;
  if (!facts.meta_labels_given && plan.missing.empty() && all_meta(plan.stale)) {
    return Verdict{VerdictKind::cannot_tell,
                   "endpoint " + std::to_string(ep.id) + " carries meta labels (" +
                       join(plan.stale, " ") + ") and explain was given no --meta-labels",
                   "run explain with the --meta-labels the daemon runs with (its unit's or job's "
                   "arguments); the labels are then compared as the daemon derives them"};
  }
  if (facts.meta_labels_given && plan.stale.empty() && all_meta(plan.missing)) {
    return Verdict{
        VerdictKind::unlabeled,
        "endpoint " + std::to_string(ep.id) + " lacks the meta labels " + join(plan.missing, " "),
        "if the daemon runs without these --meta-labels keys, run explain with the "
        "daemon's --meta-labels; if it has them, " +
            std::string(kCheckLabeler)};
  }
  return std::nullopt;
}

Verdict unlabeled(const ExplainFacts& facts, const cilium::Endpoint& ep,
                  const cilium::LabelWritePlan& plan) {
  // The labeler wrote, the agent holds our set as its security-relevant labels: the identity
  // is being allocated.
  if (cilium::labels_written_pending(ep, *facts.desired)) {
    return {VerdictKind::resolving,
            "labels written to endpoint " + std::to_string(ep.id) +
                "; the agent is still resolving their identity",
            ""};
  }
  if (auto differ = meta_labels_differ(facts, ep, plan)) return *differ;
  std::string summary = "endpoint " + std::to_string(ep.id) + " lacks its final labels";
  if (!plan.missing.empty()) summary += "; missing: " + join(plan.missing, " ");
  if (!plan.stale.empty()) summary += "; stale: " + join(plan.stale, " ");
  std::string fix(kCheckLabeler);
  if (facts.last_attempt) {
    summary += "; last attempt";
    if (!facts.last_attempt->at.empty()) summary += " at " + facts.last_attempt->at;
    summary += ": " + facts.last_attempt->reason;
    if (!facts.last_attempt->detail.empty()) summary += " (" + facts.last_attempt->detail + ")";
    // The labeler writes the remedy it knows into the detail; otherwise the peer at fault.
    const std::string& detail = facts.last_attempt->detail;
    if (auto at = detail.find("; fix: "); at != std::string::npos) {
      fix = detail.substr(at + 7);
    } else if (facts.last_attempt->reason.starts_with("nomad")) {
      fix = kCheckNomad;
    } else if (facts.last_attempt->reason.starts_with("agent")) {
      fix = kCheckAgent;
    }
  }
  return {VerdictKind::unlabeled, summary, fix};
}

Verdict with_endpoint(const ExplainFacts& facts, const cilium::Endpoint& ep) {
  if (cilium::is_reserved_only(ep)) {
    return {VerdictKind::not_ours,
            "endpoint " + std::to_string(ep.id) +
                " belongs to the agent (host or health), which the labeler never labels",
            ""};
  }
  if (!facts.plan) {
    return {VerdictKind::cannot_tell,
            "Nomad's answer names no complete workload (" + facts.nomad->identity_error + ")",
            std::string(kCheckNomad)};
  }
  const auto& plan = *facts.plan;
  switch (plan.action) {
    case cilium::LabelWriteAction::none:
      return {VerdictKind::labeled,
              "endpoint " + std::to_string(ep.id) + ", identity " + std::to_string(ep.identity_id) +
                  " carries the final labels",
              ""};
    case cilium::LabelWriteAction::filtered:
      return {VerdictKind::labels_filtered,
              "the agent's --labels filter drops nomad: labels: endpoint " + std::to_string(ep.id) +
                  " holds them as derived, not in its identity",
              "add nomad: to the agent's --labels (conf-examples/cilium-agent-flags.md), then "
              "restart the agent; the labeler's next resync relabels"};
    case cilium::LabelWriteAction::skip_reserved:
      return {VerdictKind::not_ours,
              "endpoint " + std::to_string(ep.id) +
                  " belongs to the agent (host or health), which the labeler never labels",
              ""};
    case cilium::LabelWriteAction::write:
      break;
  }
  return unlabeled(facts, ep, plan);
}

}  // namespace

std::string_view to_string(VerdictKind kind) {
  switch (kind) {
    case VerdictKind::labeled:
      return "labeled";
    case VerdictKind::resolving:
      return "resolving";
    case VerdictKind::unlabeled:
      return "unlabeled";
    case VerdictKind::labels_filtered:
      return "labels_filtered";
    case VerdictKind::no_endpoint:
      return "no_endpoint";
    case VerdictKind::stopped:
      return "stopped";
    case VerdictKind::unknown_to_nomad:
      return "unknown_to_nomad";
    case VerdictKind::cannot_tell:
      return "cannot_tell";
    case VerdictKind::not_ours:
      return "not_ours";
  }
  return "cannot_tell";
}

Verdict explain_verdict(const ExplainFacts& facts) {
  if (facts.nomad_not_found) {
    if (facts.endpoint) {
      return {VerdictKind::unknown_to_nomad,
              "Nomad does not know allocation " + facts.alloc_id + ", yet the agent has endpoint " +
                  std::to_string(facts.endpoint->id) + " for it",
              "an orphan (allocation garbage-collected, or another cluster's): the labeler's "
              "--gc-endpoints deletes it after --gc-grace"};
    }
    return {VerdictKind::unknown_to_nomad,
            "Nomad does not know allocation " + facts.alloc_id +
                (facts.entry ? " (the state file still lists it)" : ""),
            "check the ID, and that --nomad-addr points at this node's cluster and region"};
  }
  if (!facts.cilium_error.empty()) {
    return {VerdictKind::cannot_tell, "the Cilium agent could not be asked: " + facts.cilium_error,
            std::string(kCheckAgent)};
  }
  if (!facts.nomad) {
    return {VerdictKind::cannot_tell, "Nomad could not be asked: " + facts.nomad_error,
            std::string(kCheckNomad)};
  }
  const auto& alloc = facts.nomad->alloc;
  if (alloc.is_client_terminal() || (!facts.endpoint && alloc.is_terminal())) {
    std::string summary = "stopped: Nomad reports client status " + alloc.client_status +
                          ", desired " + alloc.desired_status;
    if (!facts.endpoint) return {VerdictKind::stopped, summary + "; no endpoint is left", ""};
    return {VerdictKind::stopped,
            summary + ", yet the agent still has endpoint " + std::to_string(facts.endpoint->id),
            "cilium-cni's DEL should have removed it; the labeler's --gc-endpoints deletes it "
            "after --gc-grace"};
  }
  if (!facts.endpoint) {
    return {VerdictKind::no_endpoint,
            "Nomad runs it (client status " + alloc.client_status +
                ") but the agent has no endpoint for it",
            "a group in bridge or host network mode gets no Cilium endpoint: its network must be "
            "mode \"cni/<network>\" with cilium-cni chained before cilium-nomad-cni "
            "(conf-examples/cilium.conflist)"};
  }
  return with_endpoint(facts, *facts.endpoint);
}

}  // namespace cn::labeler::explain
