#pragma once
// Per-API-group rate limiting as in the newest cc pkg/rate/api_limiter.go (`wait`), reduced to
// what a client can observe:
// 1. a cap on parallel requests: a request waits (up to the maximum wait) for one of
//    `parallel_requests` slots, held until its handler is done, else 429 "timed out while
//    waiting to be served with N parallel requests: context deadline exceeded";
// 2. a token bucket (rate, burst): a request that would have to wait longer than what is left of
//    the maximum wait is refused with 429 "request would have to wait ...", after sleeping the
//    mean processing time of the last 10 served requests (pacing clients that retry at once);
//    otherwise it waits on the injected clock;
// 3. a request whose client hung up while it waited is not served: its token goes back.
// Auto-adjustment, min-wait and skip-initial are not modelled.
#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>

#include "common/util/clock.h"
#include "common/util/result.h"

namespace cn::fakes::cilium {

struct RateLimitParams {
  double rate_per_sec = 0;  // 0: no rate limit
  int burst = 0;
  std::chrono::nanoseconds max_wait{0};  // 0: wait as long as needed
  int parallel_requests = 0;             // 0: no cap
};

// Go's time.Duration.String(): "16s", "1.5s", "250ms", "1m0s", "1h2m3.5s".
std::string go_duration(std::chrono::nanoseconds d);
// "endpoint-patch=rate-limit:2/s,rate-burst:4,max-wait-duration:15s" (the agent's flag syntax).
Result<std::pair<std::string, RateLimitParams>> parse_api_rate_limit(
    const std::string& spec, const std::map<std::string, RateLimitParams>& base);
Result<std::chrono::nanoseconds> parse_go_duration(std::string_view text);

class ApiRateLimiter {
  struct Shared;

 public:
  // An admitted request (Cilium's LimitedRequest): holds its parallel slot until done() or
  // destruction, and then counts its processing time (agent clock) for the 429 pacing.
  class Slot {
   public:
    Slot() = default;
    Slot(Slot&& other) noexcept;
    Slot& operator=(Slot&& other) noexcept;
    Slot(const Slot&) = delete;
    Slot& operator=(const Slot&) = delete;
    ~Slot() { done(); }
    void done();

   private:
    friend class ApiRateLimiter;
    std::shared_ptr<Shared> shared_;
    bool holds_parallel_ = false;
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
  const RateLimitParams& params() const { return params_; }

 private:
  bool take_parallel_slot(MonoTime deadline, std::stop_token stop);

  Clock& clock_;
  RateLimitParams params_;
  std::shared_ptr<Shared> shared_;
};

}  // namespace cn::fakes::cilium
