#include "common/util/backoff.h"

#include <algorithm>

namespace cn {

std::chrono::milliseconds backoff_delay(const BackoffPolicy& policy, int attempt,
                                        std::mt19937_64& rng) {
  const long long cap = std::max<long long>(policy.cap.count(), 1);
  const long long floor = std::clamp<long long>(policy.floor.count(), 0, cap);
  long long ceiling = std::max<long long>(policy.base.count(), 1);
  // Doubling stops at the cap, which also keeps it from overflowing.
  for (int i = 0; i < attempt && ceiling < cap; ++i) ceiling *= 2;
  ceiling = std::clamp(ceiling, floor, cap);
  return std::chrono::milliseconds{std::uniform_int_distribution<long long>(floor, ceiling)(rng)};
}

Backoff::Backoff(BackoffPolicy policy, std::uint64_t seed) : policy_(policy), rng_(seed) {}

std::chrono::milliseconds Backoff::delay(int attempt) {
  MutexLock lock(mu_);
  return backoff_delay(policy_, attempt, rng_);
}

}  // namespace cn
