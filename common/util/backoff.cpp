#include "common/util/backoff.h"

#include <algorithm>

namespace cn {

std::chrono::milliseconds BackoffPolicy::delay(int retries, BackoffJitter& jitter) const {
  const long long hi = std::max<long long>(cap.count(), 1);
  const long long lo = std::clamp<long long>(floor.count(), 0, hi);
  long long ceiling = std::max<long long>(base.count(), 1);
  // Doubling stops at the cap, which also keeps it from overflowing.
  for (int i = 0; i < retries && ceiling < hi; ++i) ceiling *= 2;
  ceiling = std::clamp(ceiling, lo, hi);
  return std::chrono::milliseconds{jitter.uniform(lo, ceiling)};
}

BackoffJitter::BackoffJitter(std::uint64_t seed) : rng_(seed) {}

long long BackoffJitter::uniform(long long lo, long long hi) {
  MutexLock lock(mu_);
  return std::uniform_int_distribution<long long>(lo, hi)(rng_);
}

BackoffStrategy::BackoffStrategy(BackoffPolicy policy, BackoffJitter& jitter)
    : policy_(policy), jitter_(&jitter) {}

BackoffStrategy::BackoffStrategy(BackoffPolicy policy, std::uint64_t seed)
    : policy_(policy),
      own_jitter_(std::make_unique<BackoffJitter>(seed)),
      jitter_(own_jitter_.get()) {}

std::chrono::milliseconds BackoffStrategy::next_delay() {
  return policy_.delay(retries_++, *jitter_);
}

}  // namespace cn
