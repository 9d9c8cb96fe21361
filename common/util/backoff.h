#pragma once
// The one backoff of the project: exponential with FULL jitter. The delay before the retry after
// `attempt` earlier retries (0 for the first) is uniform in [floor, min(cap, base * 2^attempt)],
// so callers that failed together (nodes that lost Nomad at once, workers behind the agent's
// limiter) spread out instead of retrying in lock-step. The floor keeps a run of unlucky draws
// near 0 from turning into a busy loop.
#include <chrono>
#include <cstdint>
#include <random>

#include "common/util/mutex.h"

namespace cn {

struct BackoffPolicy {
  std::chrono::milliseconds base{1'000};
  std::chrono::milliseconds cap{60'000};
  std::chrono::milliseconds floor{250};
};

std::chrono::milliseconds backoff_delay(const BackoffPolicy& policy, int attempt,
                                        std::mt19937_64& rng);

// backoff_delay with its own generator, for callers shared by several threads. The seed makes
// delays reproducible in tests.
class Backoff {
 public:
  explicit Backoff(BackoffPolicy policy, std::uint64_t seed = std::random_device{}());
  std::chrono::milliseconds delay(int attempt) EXCLUDES(mu_);
  const BackoffPolicy& policy() const { return policy_; }

 private:
  BackoffPolicy policy_;
  Mutex mu_;
  std::mt19937_64 rng_ GUARDED_BY(mu_);
};

}  // namespace cn
