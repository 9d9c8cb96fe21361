#pragma once
// Per-API-group rate limiting as in cc pkg/rate/api_limiter.go, reduced to what a client can
// observe: a token bucket (rate, burst) and a maximum wait. A request that would have to wait
// longer is refused at once with 429 and Cilium's message; otherwise it waits on the injected
// clock and is served. Auto-adjustment and parallel-request caps are not modelled.
#include <chrono>
#include <map>
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
};

// Go's time.Duration.String(): "16s", "1.5s", "250ms", "1m0s", "1h2m3.5s".
std::string go_duration(std::chrono::nanoseconds d);
// "endpoint-patch=rate-limit:2/s,rate-burst:4,max-wait-duration:15s" (the agent's flag syntax).
Result<std::pair<std::string, RateLimitParams>> parse_api_rate_limit(
    const std::string& spec, const std::map<std::string, RateLimitParams>& base);
Result<std::chrono::nanoseconds> parse_go_duration(std::string_view text);

class ApiRateLimiter {
 public:
  ApiRateLimiter(Clock& clock, RateLimitParams params);
  // nullopt: admitted (after waiting if needed). Otherwise the 429 message.
  std::optional<std::string> acquire(std::stop_token stop = {});
  const RateLimitParams& params() const { return params_; }

 private:
  Clock& clock_;
  RateLimitParams params_;
  std::mutex mu_;
  double tokens_;
  MonoTime last_;
};

}  // namespace cn::fakes::cilium
