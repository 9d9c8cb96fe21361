#pragma once
// Whether an endpoint needs a label write, decided from what the agent reports. Writes are
// rate-limited (0.5/s per agent) and each changes the identity, so the labeler writes only when
// the identity is not already exactly ours.
#include <string>
#include <vector>

#include "common/cilium/model/endpoint.h"
#include "common/labels/label_set.h"

namespace cn::cilium {

enum class LabelWriteAction {
  none,           // identity holds exactly the desired `nomad:` labels and no reserved:init
  write,          // send the full desired set
  skip_reserved,  // host/health endpoint: the agent refuses writes there, never try
  filtered,       // the desired labels sit in `derived`: the agent's --labels filter demotes
                  // them, so another write cannot change the identity (operator must allow
                  // `nomad:.*`)
};

struct LabelWritePlan {
  LabelWriteAction action = LabelWriteAction::none;
  std::string reason;                // one line for logs
  std::vector<std::string> missing;  // desired labels not in the identity
  std::vector<std::string> stale;    // identity labels of ours (labels::is_ours) not desired
};

// Compares the identity labels (status.identity.labels) with `desired`. Only labels::is_ours()
// labels can be stale: others are left alone, except that one holding a key we want (keys
// collide across sources) shows up as missing. Precedence: skip_reserved, then
// none, then filtered, then write (reserved:init alone forces a write, which is how the second
// PATCH /labels that strips init gets triggered).
LabelWritePlan plan_label_write(const Endpoint& current, const labels::LabelSet& desired);

// Written already, identity still resolving: the agent holds exactly our desired set (and no
// reserved:init) as the endpoint's security-relevant labels while it allocates the identity.
bool labels_written_pending(const Endpoint& current, const labels::LabelSet& desired);

}  // namespace cn::cilium
