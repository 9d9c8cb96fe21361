// The retries' backoff (full jitter) and the retry driver, in simulated time (ManualClock):
// which answers are retried, how long the waits are, and that nothing runs past the deadline.
#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <mutex>
#include <vector>

#include "common/http/retry.h"
#include "tests/support/manual_clock.h"
#include "tests/unit/clients/client_test_util.h"

namespace cn::http {
namespace {

using namespace std::chrono_literals;
using client_testing::ClockPump;
using client_testing::eventually;

HttpResult<Response> status(int s, std::string body = {}) {
  return Response{s, {}, std::move(body)};
}
HttpResult<Response> failure(ErrorKind k) {
  return fail(k, "boom");
}

// Answers from a script (the last one repeats) and notes when each attempt ran.
class Script {
 public:
  explicit Script(std::vector<HttpResult<Response>> answers, Clock& clock)
      : answers_(std::move(answers)), clock_(clock) {}
  HttpResult<Response> operator()(std::chrono::milliseconds left) {
    std::lock_guard lock(mu_);
    times_.push_back(clock_.now());
    lefts_.push_back(left);
    const std::size_t i = std::min(times_.size() - 1, answers_.size() - 1);
    ++count_;
    return answers_[i];
  }
  int count() const { return count_.load(); }
  std::vector<MonoTime> times() const {
    std::lock_guard lock(mu_);
    return times_;
  }
  std::vector<std::chrono::milliseconds> lefts() const {
    std::lock_guard lock(mu_);
    return lefts_;
  }

 private:
  std::vector<HttpResult<Response>> answers_;
  Clock& clock_;
  mutable std::mutex mu_;
  std::vector<MonoTime> times_;
  std::vector<std::chrono::milliseconds> lefts_;
  std::atomic<int> count_{0};
};

RetryPolicy policy(int attempts, std::chrono::milliseconds base = 100ms,
                   std::chrono::milliseconds max = 1s, bool rate_limited_until_deadline = false) {
  return RetryPolicy{attempts, base, max, rate_limited_until_deadline};
}

TEST(Backoff, FullJitterStaysUnderTheExponentialCeiling) {
  const BackoffPolicy p = policy(10, 100ms, 1s).backoff();
  BackoffJitter jitter(7);
  const std::vector<long long> ceilings = {100, 200, 400, 800, 1000, 1000};
  for (std::size_t n = 0; n < ceilings.size(); ++n) {
    long long lo = 1'000'000, hi = -1;
    for (int i = 0; i < 2000; ++i) {
      long long d = p.delay(static_cast<int>(n), jitter).count();
      lo = std::min(lo, d);
      hi = std::max(hi, d);
    }
    EXPECT_GE(lo, 0);
    EXPECT_LE(hi, ceilings[n]) << "retry " << n + 1;
    // Full jitter: the whole range is used, not just a band near the ceiling.
    EXPECT_LT(lo, ceilings[n] / 10) << "retry " << n + 1;
    EXPECT_GT(hi, ceilings[n] * 9 / 10) << "retry " << n + 1;
  }
}

TEST(Backoff, SameSeedSameDelays) {
  const BackoffPolicy p = policy(5).backoff();
  BackoffJitter a(42), b(42), c(43);
  std::vector<long long> da, db, dc;
  for (int i = 1; i <= 20; ++i) {
    da.push_back(p.delay(i % 5, a).count());
    db.push_back(p.delay(i % 5, b).count());
    dc.push_back(p.delay(i % 5, c).count());
  }
  EXPECT_EQ(da, db);
  EXPECT_NE(da, dc);
}

TEST(RetryClassification, OnlyConnectFailures5xxAnd429) {
  EXPECT_TRUE(is_retryable(failure(ErrorKind::transport)));
  for (auto k : {ErrorKind::timeout, ErrorKind::tls, ErrorKind::cancelled, ErrorKind::bad_answer,
                 ErrorKind::invalid}) {
    EXPECT_FALSE(is_retryable(failure(k))) << to_string(k);
  }
  for (int s : {429, 500, 502, 503, 504}) EXPECT_TRUE(is_retryable(status(s))) << s;
  for (int s : {200, 204, 400, 403, 404, 409, 422, 501}) EXPECT_FALSE(is_retryable(status(s))) << s;
}

TEST(WithRetry, RetriesServerErrorsOnTheInjectedClockUntilSuccess) {
  ManualClock clock;
  const RetryPolicy retry = policy(4);
  BackoffJitter jitter(1);
  Script script({status(503), failure(ErrorKind::transport), status(200, "ok")}, clock);
  const MonoTime start = clock.now();
  auto fut = std::async(std::launch::async, [&] {
    int made = 0;
    auto r = with_retry(RetryRun{retry, jitter, clock, start + 60s}, std::ref(script), &made);
    return std::make_pair(std::move(r), made);
  });
  // Each wait must be on the clock: the retry does not happen until time moves.
  for (int i = 1; i <= 2; ++i) {
    EXPECT_TRUE(eventually([&] { return script.count() == i && clock.sleepers() == 1; }))
        << "retry " << i;
    clock.advance(1s);  // >= any delay allowed by max_delay
  }
  auto [res, made] = fut.get();
  ASSERT_TRUE(res);
  EXPECT_EQ(res->body, "ok");
  EXPECT_EQ(made, 3);
  EXPECT_EQ(script.count(), 3);
}

TEST(WithRetry, NonRetryableAnswersReturnAtOnce) {
  ManualClock clock;
  const RetryPolicy retry = policy(5);
  BackoffJitter jitter(1);
  for (auto answer : {status(404), status(400), status(501), failure(ErrorKind::tls),
                      failure(ErrorKind::timeout)}) {
    Script script({answer}, clock);
    int made = 0;
    auto r = with_retry(RetryRun{retry, jitter, clock, clock.now() + 60s}, std::ref(script), &made);
    EXPECT_EQ(made, 1);
    EXPECT_EQ(r.has_value(), answer.has_value());
  }
}

TEST(WithRetry, GivesUpAfterMaxAttemptsWithTheLastAnswer) {
  ManualClock clock;
  ClockPump pump(clock, 1s, ClockPump::Mode::on_sleep);
  const RetryPolicy retry = policy(3);
  BackoffJitter jitter(1);
  Script script({status(500, "first"), status(502, "second"), status(503, "last")}, clock);
  int made = 0;
  auto r = with_retry(RetryRun{retry, jitter, clock, clock.now() + 1h}, std::ref(script), &made);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 503);
  EXPECT_EQ(r->body, "last");
  EXPECT_EQ(made, 3);
}

TEST(WithRetry, NeverSleepsOrAttemptsPastTheDeadline) {
  ManualClock clock;
  const RetryPolicy retry = policy(1000, 300ms, 300ms);
  BackoffJitter jitter(3);
  Script script({status(503)}, clock);
  const MonoTime deadline = clock.now() + 2s;
  auto fut = std::async(std::launch::async, [&] {
    return with_retry(RetryRun{retry, jitter, clock, deadline}, std::ref(script));
  });
  // Move time in small steps while the retry sleeps; stop when it returns.
  while (fut.wait_for(0ms) != std::future_status::ready) {
    if (!clock.wait_for_sleepers(1, 50ms)) continue;
    const int before = script.count();
    clock.advance(50ms);
    eventually([&] { return clock.sleepers() == 0 || script.count() != before; }, 20ms);
  }
  auto r = fut.get();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 503);
  EXPECT_GT(script.count(), 3);
  for (auto t : script.times()) EXPECT_LT(t, deadline);
  for (auto left : script.lefts()) EXPECT_GT(left.count(), 0);
  EXPECT_EQ(clock.sleepers(), 0);
}

TEST(WithRetry, PastDeadlineMakesNoAttempt) {
  ManualClock clock;
  const RetryPolicy retry = policy(3);
  BackoffJitter jitter(1);
  Script script({status(200)}, clock);
  auto r = with_retry(RetryRun{retry, jitter, clock, clock.now()}, std::ref(script));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, ErrorKind::timeout);
  EXPECT_EQ(script.count(), 0);
}

TEST(WithRetry, RateLimitedIsRetriedUntilTheDeadlineWhenAsked) {
  ManualClock clock;
  ClockPump pump(clock, 1s, ClockPump::Mode::on_sleep);
  const RetryPolicy limited = policy(2, 100ms, 1s, true);
  BackoffJitter limited_jitter(1);
  Script until_deadline(
      {status(429), status(429), status(429), status(429), status(429), status(200)}, clock);
  auto r = with_retry(RetryRun{limited, limited_jitter, clock, clock.now() + 1h},
                      std::ref(until_deadline));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(until_deadline.count(), 6);

  const RetryPolicy bounded = policy(2, 100ms, 1s, false);
  BackoffJitter bounded_jitter(1);
  Script capped({status(429), status(429), status(200)}, clock);
  auto r2 =
      with_retry(RetryRun{bounded, bounded_jitter, clock, clock.now() + 1h}, std::ref(capped));
  ASSERT_TRUE(r2);
  EXPECT_EQ(r2->status, 429);
  EXPECT_EQ(capped.count(), 2);
}

TEST(WithRetry, ServerHintStretchesTheWait) {
  ManualClock clock;
  const RetryPolicy retry = policy(3, 1ms, 5s);
  BackoffJitter jitter(1);
  Script script({status(429, "wait 3s"), status(200)}, clock);
  DelayHint hint = [](const Response& r) -> std::optional<std::chrono::milliseconds> {
    return r.body == "wait 3s" ? std::optional(3000ms) : std::nullopt;
  };
  auto fut = std::async(std::launch::async, [&] {
    return with_retry(RetryRun{retry, jitter, clock, clock.now() + 1min, {}, hint},
                      std::ref(script));
  });
  ASSERT_TRUE(clock.wait_for_sleepers(1));
  clock.advance(2900ms);
  EXPECT_EQ(fut.wait_for(50ms), std::future_status::timeout);  // still waiting out the hint
  EXPECT_EQ(script.count(), 1);
  clock.advance(200ms);
  auto r = fut.get();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
}

TEST(WithRetry, StopTokenEndsTheWait) {
  ManualClock clock;
  const RetryPolicy retry = policy(5, 1s, 1s);
  BackoffJitter jitter(1);
  Script script({status(503)}, clock);
  std::stop_source stop;
  auto fut = std::async(std::launch::async, [&] {
    return with_retry(RetryRun{retry, jitter, clock, clock.now() + 1h, stop.get_token()},
                      std::ref(script));
  });
  ASSERT_TRUE(clock.wait_for_sleepers(1));
  stop.request_stop();
  auto r = fut.get();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 503);
  EXPECT_EQ(script.count(), 1);
}

}  // namespace
}  // namespace cn::http
