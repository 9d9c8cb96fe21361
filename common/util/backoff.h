#pragma once
// The one backoff of the project: exponential with FULL jitter. The delay before the retry after
// `retries` earlier ones (0 for the first) is uniform in [floor, min(cap, base * 2^retries)], so
// callers that failed together (nodes that lost Nomad at once, workers behind the agent's
// limiter) spread out instead of retrying in lock-step. The floor keeps a run of unlucky draws
// near 0 from turning into a busy loop.
//
// Three parts, after Envoy's BackOffStrategy (source/common/common/backoff_strategy.h): the
// policy (numbers only), a seeded jitter source a component shares between its threads, and
// one BackoffStrategy per retry loop, which counts the loop's retries so the loop does not.
#include <chrono>
#include <cstdint>
#include <memory>
#include <random>

#include "common/util/mutex.h"

namespace cn {

class BackoffJitter;

struct BackoffPolicy {
  std::chrono::milliseconds base{1'000};
  std::chrono::milliseconds cap{60'000};
  std::chrono::milliseconds floor{250};

  // The delay before the retry after `retries` earlier ones, drawn from `jitter`. For state
  // that outlives a loop (a queued item carries its own count); loops use BackoffStrategy.
  std::chrono::milliseconds delay(int retries, BackoffJitter& jitter) const;
};

// Uniform draws from one generator, for every loop of a component (thread-safe). The seed makes
// delays reproducible in tests: the same seed and the same calls give the same draws.
class BackoffJitter {
 public:
  // A configured seed, where 0 (the options' default) asks for a random one.
  static std::uint64_t seed_or_random(std::uint64_t configured) {
    return configured != 0 ? configured : std::random_device{}();
  }

  explicit BackoffJitter(std::uint64_t seed = std::random_device{}());
  // Uniform in [lo, hi].
  long long uniform(long long lo, long long hi) EXCLUDES(mu_);

 private:
  Mutex mu_;
  std::mt19937_64 rng_ GUARDED_BY(mu_);
};

// One retry loop's backoff: next_delay() gives the wait before the next retry and counts it;
// reset() after a success starts over from `base`. Not thread-safe (one loop, one thread);
// the jitter source may be shared.
class BackoffStrategy {
 public:
  // Draws from `jitter`, which must outlive this.
  BackoffStrategy(BackoffPolicy policy, BackoffJitter& jitter);
  // Draws from a source of its own.
  explicit BackoffStrategy(BackoffPolicy policy, std::uint64_t seed = std::random_device{}());

  std::chrono::milliseconds next_delay();
  void reset() { retries_ = 0; }
  // next_delay() calls since construction or the last reset().
  int retries() const { return retries_; }
  const BackoffPolicy& policy() const { return policy_; }

 private:
  BackoffPolicy policy_;
  std::unique_ptr<BackoffJitter> own_jitter_;
  BackoffJitter* jitter_;
  int retries_ = 0;
};

}  // namespace cn
