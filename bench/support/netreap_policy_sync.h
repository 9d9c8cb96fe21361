#pragma once
// netreap's policy apply (internal/policy/policy.go, per shared/reference/netreap.md), rebuilt
// with our raw HTTP client against an agent's REST API: on every change of its one Consul key,
// GET /v1/policy (kept to restore on failure), DELETE /v1/policy without labels (every rule),
// then PUT /v1/policy with the key's whole value, all policies at once. The Consul watch itself
// is not part of it: the benchmark starts the clock where netreap's handler starts.
#include <chrono>
#include <string>

#include "common/util/result.h"
#include "tests/fakes/http/raw_http_client.h"

namespace cn::bench {

struct NetreapPolicySync {
  int agent_calls = 0;
  double total_ms = 0;
  // From DELETE answered to PUT answered: the node enforces no policy of this set meanwhile.
  double without_policy_ms = 0;
};

// `rules_text`: the rules array as JSON text, as netreap stores it in its Consul key.
Result<NetreapPolicySync> netreap_policy_sync(const fakes::HttpTarget& agent,
                                              const std::string& rules_text);

}  // namespace cn::bench
