// The fake agent's API limiter against cases worked out by hand from Cilium's APILimiter
// (cc pkg/rate/api_limiter.go: requestFinished, calculateAdjustmentFactor, delayedAdjustment,
// adjustmentLimit, adjustedLimit/Burst/ParallelRequests, wait). Notation: R, B, P the initial
// rate, burst and parallel; E the estimated processing time; F the maximum adjustment factor;
// d the delayed adjustment factor; f = clamp(E / mean, 1/F, F).
#include <gtest/gtest.h>

#include <future>
#include <vector>

#include "tests/fakes/cilium/api_rate_limiter.h"
#include "tests/fakes/cilium/fake_cilium_agent.h"
#include "tests/support/manual_clock.h"

namespace cn::fakes::cilium {
namespace {

using namespace std::chrono_literals;

RateLimitParams params_from(const std::string& options) {
  auto parsed = parse_api_rate_limit("g=" + options, {});
  EXPECT_TRUE(parsed) << parsed.error().message;
  return parsed ? parsed->second : RateLimitParams{};
}

// Admits one request (it must not wait), lets it run `took` on the clock, and finishes it.
void serve(ApiRateLimiter& limiter, ManualClock& clock, std::chrono::nanoseconds took) {
  auto a = limiter.admit();
  ASSERT_EQ(a.refused, std::nullopt);
  clock.advance(took);
  a.slot.done();
}

TEST(ApiLimiterAdjustment, FollowsTheMeanProcessingTime) {
  ManualClock clock;
  ApiRateLimiter limiter(
      clock, params_from("rate-limit:1/s,rate-burst:4,parallel-requests:4,auto-adjust:true,"
                         "estimated-processing-duration:1s"));
  // R=1/s B=4 P=4 E=1s, F=100 and d=0.5 by default, Pmin=1, no Pmax.
  // 1st takes 0.5 s: mean 0.5, f=2. rate 1*2=2; burst 4+(8-4)*0.5=6; parallel 6.
  serve(limiter, clock, 500ms);
  auto c = limiter.current();
  EXPECT_DOUBLE_EQ(c.adjustment_factor, 2.0);
  EXPECT_DOUBLE_EQ(c.rate_per_sec, 2.0);
  EXPECT_EQ(c.burst, 6);
  EXPECT_EQ(c.parallel_requests, 6);
  // 2nd takes 1.5 s: mean (0.5+1.5)/2=1, f=1: back to R, B, P.
  serve(limiter, clock, 1500ms);
  c = limiter.current();
  EXPECT_DOUBLE_EQ(c.rate_per_sec, 1.0);
  EXPECT_EQ(c.burst, 4);
  EXPECT_EQ(c.parallel_requests, 4);
  // 3rd takes 1.75 s: mean 3.75/3=1.25, f=0.8. rate 0.8; burst 4+(3.2-4)*0.5=3.6, rounded: 4;
  // parallel the same 3.6, truncated: 3.
  serve(limiter, clock, 1750ms);
  c = limiter.current();
  EXPECT_DOUBLE_EQ(c.mean_processing_seconds, 1.25);
  EXPECT_DOUBLE_EQ(c.adjustment_factor, 0.8);
  EXPECT_DOUBLE_EQ(c.rate_per_sec, 0.8);
  EXPECT_EQ(c.burst, 4);
  EXPECT_EQ(c.parallel_requests, 3);
}

TEST(ApiLimiterAdjustment, MeanIsOverTheLastMeanOverAndErrorsDoNotCount) {
  ManualClock clock;
  ApiRateLimiter limiter(clock, params_from("rate-limit:1/s,rate-burst:8,auto-adjust:true,"
                                            "estimated-processing-duration:1s,mean-over:2"));
  serve(limiter, clock, 4s);
  serve(limiter, clock, 1s);
  serve(limiter, clock, 3s);  // window {1 s, 3 s}: mean 2, f=0.5, rate 0.5
  EXPECT_DOUBLE_EQ(limiter.current().mean_processing_seconds, 2.0);
  EXPECT_DOUBLE_EQ(limiter.current().rate_per_sec, 0.5);
  auto failing = limiter.admit();
  ASSERT_EQ(failing.refused, std::nullopt);
  clock.advance(100s);
  failing.slot.failed();  // a handler error: requestFinished skips the statistics
  EXPECT_DOUBLE_EQ(limiter.current().mean_processing_seconds, 2.0);
  EXPECT_DOUBLE_EQ(limiter.current().rate_per_sec, 0.5);
}

TEST(ApiLimiterAdjustment, BoundedByTheMaximumFactorAndTheParallelLimits) {
  ManualClock clock;
  ApiRateLimiter limiter(
      clock, params_from("rate-limit:1/s,rate-burst:4,parallel-requests:4,auto-adjust:true,"
                         "estimated-processing-duration:1s,max-adjustment-factor:2,"
                         "delayed-adjustment-factor:1,min-parallel-requests:3,"
                         "max-parallel-requests:5,mean-over:1"));
  // Instantaneous: E/0 is infinite, f=F=2. rate 1*2=2 (= R*F). burst 4+(8-4)*1=8, within
  // [B/F, B*F]=[2, 8]. parallel 8, cut to Pmax 5.
  serve(limiter, clock, 0s);
  auto c = limiter.current();
  EXPECT_DOUBLE_EQ(c.adjustment_factor, 2.0);
  EXPECT_DOUBLE_EQ(c.rate_per_sec, 2.0);
  EXPECT_EQ(c.burst, 8);
  EXPECT_EQ(c.parallel_requests, 5);
  // 100 s: E/mean=0.01, f=1/F=0.5. rate 0.5 (= R/F). burst 4+(2-4)*1=2, raised to Pmin 3;
  // parallel the same 3.
  serve(limiter, clock, 100s);
  c = limiter.current();
  EXPECT_DOUBLE_EQ(c.adjustment_factor, 0.5);
  EXPECT_DOUBLE_EQ(c.rate_per_sec, 0.5);
  EXPECT_EQ(c.burst, 3);
  EXPECT_EQ(c.parallel_requests, 3);
}

TEST(ApiLimiterAdjustment, BurstIsHeldToItsInitialTimesTheFactor) {
  ManualClock clock;
  ApiRateLimiter limiter(
      clock, params_from("rate-limit:1/s,rate-burst:4,auto-adjust:true,max-adjustment-factor:2,"
                         "estimated-processing-duration:1s,min-parallel-requests:20"));
  // f=2: burst 4+(8-4)*0.5=6, raised to Pmin 20, then held to B*F=8.
  serve(limiter, clock, 0s);
  EXPECT_EQ(limiter.current().burst, 8);
}

TEST(ApiLimiterAdjustment, PatchDefaultsOpenUpAfterOneFastRequest) {
  ManualClock clock;
  ApiRateLimiter limiter(clock, cilium_default_rate_limits(CiliumVersion::v1_17)["endpoint-patch"]);
  // endpoint-patch: R=0.5/s B=4 P=4 E=1s skip 4, F=100 d=0.5 Pmin=1 (fallbacks).
  // An instantaneous PATCH: f=F=100. rate 0.5*100=50/s; burst 4+(400-4)*0.5=202;
  // parallel 202 (no Pmax; P*F=400 is above).
  serve(limiter, clock, 0s);  // skipped (1 of 4), but its processing time counts
  auto c = limiter.current();
  EXPECT_DOUBLE_EQ(c.rate_per_sec, 50.0);
  EXPECT_EQ(c.burst, 202);
  EXPECT_EQ(c.parallel_requests, 202);
  // 3 more skipped, then the bucket's initial 4 tokens (a larger burst only lets it fill
  // further), then the 9th waits one token at 50/s: 20 ms.
  for (int i = 0; i < 7; ++i) serve(limiter, clock, 0s);
  auto ninth = std::async(std::launch::async, [&] { return limiter.acquire(); });
  ASSERT_TRUE(clock.wait_for_sleepers(1, 5s));
  clock.advance(19ms);
  EXPECT_EQ(ninth.wait_for(20ms), std::future_status::timeout);
  clock.advance(1ms);
  ASSERT_EQ(ninth.wait_for(5s), std::future_status::ready);
  EXPECT_EQ(ninth.get(), std::nullopt);
}

TEST(ApiLimiterAdjustment, ALoweredBurstCapsTheTokensAtOnce) {
  ManualClock clock;
  ApiRateLimiter limiter(clock, params_from("rate-limit:1/s,rate-burst:10,auto-adjust:true,"
                                            "estimated-processing-duration:1s,mean-over:1,"
                                            "max-wait-duration:5s"));
  // One request taking 10 s: the bucket is full again (10), f=0.1: rate 0.1/s, burst
  // 10+(1-10)*0.5=5.5, rounded half away from zero as Go's math.Round: 6. The 10 tokens are
  // cut to 6 at the next reservation.
  serve(limiter, clock, 10s);
  EXPECT_DOUBLE_EQ(limiter.current().rate_per_sec, 0.1);
  EXPECT_EQ(limiter.current().burst, 6);
  std::vector<ApiRateLimiter::Admission> held;  // held, so no new sample re-adjusts meanwhile
  for (int i = 0; i < 6; ++i) {
    held.push_back(limiter.admit());
    ASSERT_EQ(held.back().refused, std::nullopt) << i;
  }
  // The 7th is one token short at 0.1/s: 10 s > 5 s. Before answering, the limiter sleeps the
  // mean processing time, 10 s.
  auto seventh = std::async(std::launch::async, [&] { return limiter.acquire(); });
  ASSERT_TRUE(clock.wait_for_sleepers(1, 5s));
  clock.advance(10s);
  ASSERT_EQ(seventh.wait_for(5s), std::future_status::ready);
  EXPECT_EQ(seventh.get(),
            "request would have to wait 10s to be served (maximum wait duration: 5s)");
}

TEST(ApiLimiterWait, SkipInitialTakesNoTokens) {
  ManualClock clock;
  ApiRateLimiter limiter(clock, params_from("rate-limit:0.5/s,rate-burst:1,skip-initial:2,"
                                            "max-wait-duration:1s"));
  EXPECT_EQ(limiter.acquire(), std::nullopt);  // skipped
  EXPECT_EQ(limiter.acquire(), std::nullopt);  // skipped
  EXPECT_EQ(limiter.acquire(), std::nullopt);  // the one token
  // One token short at 0.5/s: 2 s > 1 s.
  EXPECT_EQ(limiter.acquire(),
            "request would have to wait 2s to be served (maximum wait duration: 1s)");
}

TEST(ApiLimiterWait, MinWaitDelaysEvenWithTokensAndCountsAgainstTheMaximum) {
  ManualClock clock;
  ApiRateLimiter limiter(
      clock,
      params_from("rate-limit:10/s,rate-burst:10,min-wait-duration:1s,max-wait-duration:3s"));
  auto first = std::async(std::launch::async, [&] { return limiter.acquire(); });
  ASSERT_TRUE(clock.wait_for_sleepers(1, 5s));
  EXPECT_EQ(first.wait_for(20ms), std::future_status::timeout);
  clock.advance(1s);
  ASSERT_EQ(first.wait_for(5s), std::future_status::ready);
  EXPECT_EQ(first.get(), std::nullopt);

  ApiRateLimiter strict(clock, params_from("min-wait-duration:5s,max-wait-duration:3s"));
  // No rate at all: the 5 s minimum alone exceeds the 3 s maximum.
  EXPECT_EQ(strict.acquire(),
            "request would have to wait 5s to be served (maximum wait duration: 3s)");
}

TEST(ApiLimiterWait, ParallelSharesFollowTheAdjustedAllowance) {
  ManualClock clock;
  ApiRateLimiter limiter(clock,
                         params_from("parallel-requests:2,max-parallel-requests:3,auto-adjust:true,"
                                     "estimated-processing-duration:1s,max-wait-duration:5s"));
  // P=2 shares of 10,000,000/2. An instantaneous request: f=100, parallel 2+(200-2)*0.5=101,
  // cut to Pmax 3: later requests take 10,000,000/3=3,333,333 each, so three fit (9,999,999).
  serve(limiter, clock, 0s);
  ASSERT_EQ(limiter.current().parallel_requests, 3);
  std::vector<ApiRateLimiter::Admission> held;
  for (int i = 0; i < 3; ++i) {
    held.push_back(limiter.admit());
    ASSERT_EQ(held.back().refused, std::nullopt);
  }
  // The 4th waits (1 unit free) until the 5 s maximum, then gives up.
  auto fourth = std::async(std::launch::async, [&] { return limiter.acquire(); });
  ASSERT_TRUE(clock.wait_for_sleepers(1, 5s));
  clock.advance(5s);
  ASSERT_EQ(fourth.wait_for(5s), std::future_status::ready);
  EXPECT_EQ(fourth.get(),
            "timed out while waiting to be served with 3 parallel requests: context deadline "
            "exceeded");
  // A 5th waits; a finished one hands its share on.
  auto fifth = std::async(std::launch::async, [&] { return limiter.acquire(); });
  ASSERT_TRUE(clock.wait_for_sleepers(1, 5s));
  EXPECT_EQ(fifth.wait_for(20ms), std::future_status::timeout);
  held.front().slot.failed();
  ASSERT_EQ(fifth.wait_for(5s), std::future_status::ready);
  EXPECT_EQ(fifth.get(), std::nullopt);
}

TEST(ApiLimiterWait, RefusalSleepsTheMeanProcessingTimeFirst) {
  ManualClock clock;
  ApiRateLimiter limiter(clock, params_from("rate-limit:0.5/s,rate-burst:1,max-wait-duration:1s"));
  serve(limiter, clock, 300ms);  // the token; mean processing 0.3 s
  // Refill so far: 0.3 s * 0.5/s = 0.15 token; short 0.85 at 0.5/s: 1.7 s > 1 s.
  auto refused = std::async(std::launch::async, [&] { return limiter.acquire(); });
  ASSERT_TRUE(clock.wait_for_sleepers(1, 5s));  // the pacing sleep
  clock.advance(300ms);
  ASSERT_EQ(refused.wait_for(5s), std::future_status::ready);
  EXPECT_EQ(refused.get(),
            "request would have to wait 1.7s to be served (maximum wait duration: 1s)");
}

TEST(ApiLimiterFlags, ParsesEveryKeyTheAgentTakes) {
  auto p = parse_api_rate_limit(
      "endpoint-patch=rate-limit:10/m,rate-burst:8,max-wait-duration:1m,min-wait-duration:10ms,"
      "auto-adjust:false,estimated-processing-duration:2s,mean-over:5,parallel-requests:3,"
      "min-parallel-requests:2,max-parallel-requests:9,delayed-adjustment-factor:0.25,"
      "max-adjustment-factor:4,skip-initial:1,log:true,",
      cilium_default_rate_limits(CiliumVersion::v1_17));
  ASSERT_TRUE(p) << p.error().message;
  const RateLimitParams& r = p->second;
  EXPECT_DOUBLE_EQ(r.rate_per_sec, 10.0 / 60.0);
  EXPECT_EQ(r.burst, 8);
  EXPECT_EQ(r.max_wait, 60s);
  EXPECT_EQ(r.min_wait, 10ms);
  EXPECT_FALSE(r.auto_adjust);
  EXPECT_EQ(r.estimated_processing, 2s);
  EXPECT_EQ(r.mean_over, 5);
  EXPECT_EQ(r.parallel_requests, 3);
  EXPECT_EQ(r.min_parallel_requests, 2);
  EXPECT_EQ(r.max_parallel_requests, 9);
  EXPECT_DOUBLE_EQ(r.delayed_adjustment_factor, 0.25);
  EXPECT_DOUBLE_EQ(r.max_adjustment_factor, 4);
  EXPECT_EQ(r.skip_initial, 1);
  // Keys left out keep the group's defaults.
  auto d = parse_api_rate_limit("endpoint-create=rate-burst:2",
                                cilium_default_rate_limits(CiliumVersion::v1_17));
  ASSERT_TRUE(d);
  EXPECT_TRUE(d->second.auto_adjust);
  EXPECT_EQ(d->second.max_wait, 60s);
  EXPECT_EQ(d->second.skip_initial, 4);
  const auto per_ten_seconds = parse_api_rate_limit("g=rate-limit:5/10s", {});
  ASSERT_TRUE(per_ten_seconds);
  EXPECT_DOUBLE_EQ(per_ten_seconds->second.rate_per_sec, 0.5);
  EXPECT_FALSE(parse_api_rate_limit("g=rate-limit:1/1", {}));  // the agent wants a unit
  EXPECT_FALSE(parse_api_rate_limit("g=rate-burst:-1", {}));
  EXPECT_FALSE(parse_api_rate_limit("g=auto-adjust:yes", {}));
  EXPECT_FALSE(parse_api_rate_limit("g=bogus:1", {}));
}

}  // namespace
}  // namespace cn::fakes::cilium
