#pragma once
// Per-API-group rate limiting modelled on Cilium's APILimiter, cc pkg/rate/api_limiter.go as
// stored at 314ca7b (the `wait`/`requestFinished` layout; the same algorithm in every release
// the fake emulates, 1.15 through 1.20). All waits are on the injected clock. A request:
// 1. is let straight through, holding no slot and no token, if it is one of the first
//    `skip_initial` the group was asked for (its processing time still counts below);
// 2. takes a share 1/P of a FIFO weighted semaphore, P being the *current* parallel allowance,
//    waiting for it up to the maximum wait (from when it arrived), else 429 "timed out while
//    waiting to be served with P parallel requests: context deadline exceeded";
// 3. reserves a token (rate, burst) and must wait its delay, raised to `min_wait`; if that plus
//    the time spent in step 2 exceeds the maximum wait the reservation is given back, the limiter
//    sleeps the mean processing time (pacing clients that retry at once), and answers 429
//    "request would have to wait D to be served (maximum wait duration: M)";
// 4. is not served if its client hung up meanwhile (its token goes back);
// 5. when its handler finishes without error (Slot::done), its processing time joins the last
//    `mean_over`, and with auto-adjust on and an estimated processing time E the group re-derives,
//    from its *initial* values R, B, P and the factor f = E / mean, clamped to [1/F, F]
//    (F = max_adjustment_factor):
//      rate     = clamp(R*f, R/F, R*F)
//      burst    = round(clamp(max(B + (B*f - B)*d, Pmin), B/F, B*F))
//      parallel = trunc(clamp(min(max(P + (P*f - P)*d, Pmin), Pmax), P/F, P*F))
//    with d = delayed_adjustment_factor, Pmin = min_parallel_requests, Pmax =
//    max_parallel_requests (0: no upper bound before the F clamp). Refused requests and
//    handler errors (Slot::failed) change nothing but free their slot.
// Unset knobs take the upstream fallbacks: mean over 10, d 0.5, F 100, Pmin 1, burst 1.
// Simplification: a reservation given back returns a whole token even when later reservations
// were made meanwhile (x/time/rate returns less then).
// Not modelled: the newest stored endpoint handlers (cc pkg/endpoint/api/endpoint_api_handler.go
// at 08fb4ff) pass an HTTP code with each error and leave shared build time out of a request's
// processing time (`r.Unaccounted`); the limiter version behind them could not be read here.
#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>

#include "common/util/clock.h"
#include "common/util/result.h"

namespace cn::fakes::cilium {

// The fields of Cilium's APILimiterParameters a client can feel (Log is accepted and ignored).
struct RateLimitParams {
  double rate_per_sec = 0;  // 0: no rate limit
  int burst = 0;
  std::chrono::nanoseconds max_wait{0};  // 0: wait as long as needed
  int parallel_requests = 0;             // 0: no cap
  bool auto_adjust = false;
  std::chrono::nanoseconds estimated_processing{0};  // 0: no adjustment even with auto_adjust
  int mean_over = 0;                                 // 0: 10
  int min_parallel_requests = 0;                     // 0: 1
  int max_parallel_requests = 0;                     // 0: unbounded (but for the factor)
  std::chrono::nanoseconds min_wait{0};
  double delayed_adjustment_factor = 0;  // 0: 0.5
  int skip_initial = 0;
  double max_adjustment_factor = 0;  // 0: 100
};

// Go's time.Duration.String(): "16s", "1.5s", "250ms", "1m0s", "1h2m3.5s".
std::string go_duration(std::chrono::nanoseconds d);
// "endpoint-patch=rate-limit:2/s,rate-burst:4,max-wait-duration:15s,auto-adjust:false" (the
// agent's flag syntax; every key of mergeUserConfigKeyValue).
Result<std::pair<std::string, RateLimitParams>> parse_api_rate_limit(
    const std::string& spec, const std::map<std::string, RateLimitParams>& base);
Result<std::chrono::nanoseconds> parse_go_duration(std::string_view text);

class ApiRateLimiter {
  struct Shared;

 public:
  // What the group currently allows, after the adjustments so far.
  struct Current {
    double rate_per_sec = 0;
    int burst = 0;
    int parallel_requests = 0;
    double adjustment_factor = 0;        // 0 until the first adjustment
    double mean_processing_seconds = 0;  // over the last mean_over successes
  };

  // An admitted request (Cilium's LimitedRequest): holds its parallel share until done(),
  // failed() or destruction; done() feeds its processing time (agent clock) to the adjustment.
  class Slot {
   public:
    Slot() = default;
    Slot(Slot&& other) noexcept;
    Slot& operator=(Slot&& other) noexcept;
    Slot(const Slot&) = delete;
    Slot& operator=(const Slot&) = delete;
    ~Slot() { done(); }
    void done() { finish(true); }
    // The handler answered an error: the slot is freed, the statistics are left alone.
    void failed() { finish(false); }

   private:
    friend class ApiRateLimiter;
    void finish(bool succeeded);
    std::shared_ptr<Shared> shared_;
    long long semaphore_weight_ = 0;
    bool served_ = false;
    MonoTime started_{};
  };

  struct Admission {
    std::optional<std::string> refused;  // the 429 text; nullopt: admitted
    Slot slot;
  };

  ApiRateLimiter(Clock& clock, RateLimitParams params);
  // Waits as the agent does (on the clock; `stop` abandons the wait). `client_gone` is asked when
  // a wait ends: a request whose client hung up meanwhile is refused and must not be applied.
  Admission admit(std::stop_token stop = {}, const std::function<bool()>& client_gone = {});
  // admit() for a request that takes no time to process.
  std::optional<std::string> acquire(std::stop_token stop = {}) { return admit(stop).refused; }
  // The parameters with the upstream fallbacks filled in.
  const RateLimitParams& params() const { return params_; }
  Current current() const;

 private:
  bool take_parallel_share(long long weight, MonoTime deadline, std::stop_token stop);

  Clock& clock_;
  RateLimitParams params_;
  std::shared_ptr<Shared> shared_;
};

}  // namespace cn::fakes::cilium
