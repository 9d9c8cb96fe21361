#include "common/http/retry.h"

#include <algorithm>

#include <spdlog/spdlog.h>

namespace cn::http {

using std::chrono::milliseconds;

Backoff::Backoff(RetryPolicy policy, std::uint64_t seed) : policy_(policy), rng_(seed) {}

milliseconds Backoff::delay(int retry) {
  const long long base = std::max<long long>(policy_.base_delay.count(), 0);
  const long long cap = std::max<long long>(policy_.max_delay.count(), 0);
  long long ceiling = base;
  for (int i = 1; i < retry && ceiling < cap; ++i) ceiling *= 2;  // no overflow: stops at cap
  ceiling = std::min(ceiling, cap);
  std::uniform_int_distribution<long long> dist(0, ceiling);
  std::lock_guard lock(mu_);
  return milliseconds{dist(rng_)};
}

bool is_retryable_status(int status) { return status == 429 || (status >= 500 && status != 501); }

bool is_retryable(const HttpResult<Response>& result) {
  if (!result) return result.error().kind == FailureKind::connect;
  return is_retryable_status(result->status);
}

HttpResult<Response> with_retry(const RetryRun& run,
                                const std::function<HttpResult<Response>(milliseconds)>& attempt,
                                int* attempts_made) {
  spdlog::logger& log = run.log != nullptr ? *run.log : *spdlog::default_logger();
  const RetryPolicy& policy = run.backoff.policy();
  const int max_attempts = std::max(policy.max_attempts, 1);
  HttpResult<Response> last = std::unexpected(HttpFailure{FailureKind::timeout, "deadline exceeded before the first attempt"});
  int made = 0;
  for (;;) {
    auto left = std::chrono::duration_cast<milliseconds>(run.deadline - run.clock.now());
    if (left.count() <= 0) break;
    last = attempt(left);
    ++made;
    if (!is_retryable(last)) break;
    const bool rate_limited = last && last->status == 429;
    if (made >= max_attempts && !(rate_limited && policy.rate_limited_until_deadline)) break;

    milliseconds wait = run.backoff.delay(made);
    if (last && run.hint) {
      if (auto hinted = run.hint(*last)) wait = std::max(wait, std::min(*hinted, policy.max_delay));
    }
    const MonoTime wake = run.clock.now() + wait;
    if (wake >= run.deadline) break;
    log.debug("http retry what=\"{}\" attempt={} wait_ms={} reason=\"{}\"", run.what, made, wait.count(),
              last ? "status " + std::to_string(last->status) : last.error().message);
    if (!run.clock.sleep_until(wake, run.stop)) break;
  }
  if (attempts_made != nullptr) *attempts_made = made;
  return last;
}

}  // namespace cn::http
