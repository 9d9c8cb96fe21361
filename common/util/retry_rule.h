#pragma once
// The one place that decides, from an error's kind, whether and when the work behind it is tried
// again. Every retry loop (the HTTP clients' in-call retries, the labeler's work items, the
// watchers) branches on this, so a TLS error can never spin in a hot loop in one place while
// another place waits it out.
#include <string_view>

#include "common/util/result.h"

namespace cn {

enum class RetryRule {
  now,        // a passing blip (refused, reset, 5xx, 429): again within the same call's deadline
  later,      // again on a backoff of seconds to a minute (a timeout, a 4xx, a malformed answer)
  at_resync,  // only at the next resync: an operator must fix something first (TLS, ACL, a
              // disabled API); retrying sooner only fills the log
  never,      // the answer is final (not found, invalid input, shutdown)
};

RetryRule retry_rule(const Error& error);

std::string_view to_string(RetryRule rule);

// Who answered: the same kind asks for a different fix from each.
enum class Peer { nomad, cilium };

// One line for a person: what to fix when the rule is at_resync ("" otherwise).
std::string_view remedy(const Error& error, Peer peer);

}  // namespace cn
