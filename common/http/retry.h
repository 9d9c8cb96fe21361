#pragma once
// Retrying an HTTP exchange on the project's one backoff (common/util/backoff.h), full jitter:
// delay uniform in [0, min(max_delay, base_delay * 2^(n-1))], so many workers hitting the same
// limiter spread out instead of retrying in lock-step. Sleeps on the injected Clock, never past
// the caller's deadline. Retried: what retry_rule() calls RetryRule::now (connection failures,
// 5xx except 501, 429). The last answer or failure is what the caller gets.
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <stop_token>

#include <spdlog/fwd.h>

#include "common/http/http_types.h"
#include "common/util/backoff.h"
#include "common/util/clock.h"

namespace cn::http {

struct RetryPolicy {
  int max_attempts = 4;  // tries in total, the first included; < 1 counts as 1
  std::chrono::milliseconds base_delay{200};
  std::chrono::milliseconds max_delay{5'000};
  // 429 is retried until the deadline whatever max_attempts says: the server is healthy and
  // only asks us to slow down (Cilium's endpoint-patch limiter is 0.5/s, burst 4).
  bool rate_limited_until_deadline = false;

  // The waits as the project's one backoff: no floor, a hint or the deadline bounds them.
  BackoffPolicy backoff() const { return BackoffPolicy{base_delay, max_delay, {}}; }
};

bool is_retryable_status(int status);
bool is_retryable(const HttpResult<Response>& result);

// Given a retryable answer, a server-suggested wait (e.g. Cilium's "would have to wait 16s").
using DelayHint = std::function<std::optional<std::chrono::milliseconds>(const Response&)>;

// One call's retries. `jitter` is the client's, shared by its worker threads; its seed makes
// delays reproducible in tests.
struct RetryRun {
  const RetryPolicy& policy;
  BackoffJitter& jitter;
  Clock& clock;
  MonoTime deadline;
  std::stop_token stop = {};
  DelayHint hint = {};
  spdlog::logger* log = nullptr;  // nullptr: spdlog's default logger
  const char* what = "";          // e.g. "PATCH /v1/endpoint/{id}", for the log only
};

// `attempt` gets the time left before the deadline, to use as its timeout. Waits are
// max(jittered backoff, min(hint, max_delay)); a wait that would end at or after the deadline
// is not started.
[[nodiscard]] HttpResult<Response> with_retry(
    const RetryRun& run,
    const std::function<HttpResult<Response>(std::chrono::milliseconds)>& attempt,
    int* attempts_made = nullptr);

}  // namespace cn::http
