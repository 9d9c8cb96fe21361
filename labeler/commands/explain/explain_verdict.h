#pragma once
// The judgement at the end of `explain`: one line saying whether the allocation carries its
// final labels, and when it does not, why and what fixes it. A pure function of the facts, so
// every case is a unit test.
#include <string>

#include "labeler/commands/explain/explain_facts.h"

namespace cn::labeler::explain {

enum class VerdictKind {
  labeled,           // the endpoint's identity holds exactly the derived labels
  resolving,         // written, the agent is still resolving the identity
  unlabeled,         // the endpoint lacks its labels; the last recorded reason says why
  labels_filtered,   // the agent's --labels filter demotes nomad: labels
  no_endpoint,       // Nomad runs it, the agent has no endpoint for it
  stopped,           // Nomad says it has stopped
  unknown_to_nomad,  // Nomad answers 404
  cannot_tell,       // Nomad or the agent could not be asked
  not_ours,          // the endpoint belongs to the agent itself (host, health)
};

std::string_view to_string(VerdictKind kind);

struct Verdict {
  VerdictKind kind = VerdictKind::cannot_tell;
  std::string summary;  // one line
  std::string fix;      // what an operator should do; empty when nothing
  // Nothing for an operator to do.
  bool ok() const { return fix.empty(); }
};

Verdict explain_verdict(const ExplainFacts& facts);

}  // namespace cn::labeler::explain
