#pragma once
// How the labeler reaches the local Cilium agent: its REST API on a Unix socket.
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "common/http/retry.h"

namespace cn::cilium {

inline constexpr std::string_view kDefaultCiliumSocket = "/var/run/cilium/cilium.sock";

struct CiliumClientConfig {
  std::string socket_path{kDefaultCiliumSocket};
  std::chrono::milliseconds connect_timeout{2'000};
  // Per attempt (capped by the caller's deadline). A PATCH waits out the agent's limiter
  // (up to 15 s max-wait) before a 429, so an attempt must be allowed longer than that.
  std::chrono::milliseconds request_timeout{20'000};
  // 5xx and connection failures: a few tries. 429: until the deadline (the agent's default
  // endpoint-patch limiter is 0.5/s with a burst of 4, so a node starting 100 allocs queues).
  http::RetryPolicy retry{.max_attempts = 4,
                          .base_delay = std::chrono::milliseconds{250},
                          .max_delay = std::chrono::milliseconds{8'000},
                          .rate_limited_until_deadline = true};
  std::uint64_t retry_seed = 0;  // 0: random

  using Getenv = std::function<const char*(const char*)>;
  // Socket path: `flag` when non-empty, else CILIUM_SOCK, else the agent's default path. A
  // "unix://" prefix (as Cilium's own tools accept) is stripped.
  static CiliumClientConfig resolve(std::string_view flag, const Getenv& getenv);

  std::string describe() const;
};

}  // namespace cn::cilium
