#include "common/http/retry.h"

#include <algorithm>

#include <spdlog/spdlog.h>

#include "common/util/retry_rule.h"

namespace cn::http {

using std::chrono::milliseconds;

bool is_retryable_status(int status) {
  if (status >= 200 && status < 400) return false;
  return retry_rule(http_error(status, "")) == RetryRule::now;
}

bool is_retryable(const HttpResult<Response>& result) {
  if (!result) return retry_rule(result.error()) == RetryRule::now;
  return is_retryable_status(result->status);
}

HttpResult<Response> with_retry(const RetryRun& run,
                                const std::function<HttpResult<Response>(milliseconds)>& attempt,
                                int* attempts_made) {
  spdlog::logger& log = run.log != nullptr ? *run.log : *spdlog::default_logger();
  const RetryPolicy& policy = run.policy;
  const int max_attempts = std::max(policy.max_attempts, 1);
  BackoffStrategy backoff(policy.backoff(), run.jitter);
  HttpResult<Response> last =
      fail(ErrorKind::timeout, "deadline exceeded before the first attempt");
  int made = 0;  // attempts so far: the first and the retries the strategy counted
  for (;;) {
    auto left = std::chrono::duration_cast<milliseconds>(run.deadline - run.clock.now());
    if (left.count() <= 0) break;
    last = attempt(left);
    made = backoff.retries() + 1;
    if (!is_retryable(last)) break;
    const bool rate_limited = last && last->status == 429;
    if (made >= max_attempts && !(rate_limited && policy.rate_limited_until_deadline)) break;

    milliseconds wait = backoff.next_delay();
    if (last && run.hint) {
      if (auto hinted = run.hint(*last)) wait = std::max(wait, std::min(*hinted, policy.max_delay));
    }
    const MonoTime wake = run.clock.now() + wait;
    if (wake >= run.deadline) break;
    log.debug("http retry what=\"{}\" attempt={} wait_ms={} reason=\"{}\"", run.what, made,
              wait.count(), last ? "status " + std::to_string(last->status) : last.error().message);
    if (!run.clock.sleep_until(wake, run.stop)) break;
  }
  if (attempts_made != nullptr) *attempts_made = made;
  return last;
}

}  // namespace cn::http
