// The one backoff (common/util/backoff.h): a strategy counts its own retries, starts over on
// reset(), and draws the same delays as the policy over the same jitter source.
#include <gtest/gtest.h>

#include <chrono>
#include <vector>

#include "common/util/backoff.h"

namespace cn {
namespace {

using namespace std::chrono_literals;

const BackoffPolicy kStrategyTestPolicy{100ms, 1s, 10ms};

TEST(BackoffStrategy, CountsItsRetriesAndDoublesTheCeilingUpToTheCap) {
  BackoffStrategy backoff(kStrategyTestPolicy, 1);
  EXPECT_EQ(backoff.retries(), 0);
  const std::vector<long long> ceilings = {100, 200, 400, 800, 1000, 1000};
  for (std::size_t n = 0; n < ceilings.size(); ++n) {
    const long long d = backoff.next_delay().count();
    EXPECT_GE(d, 10) << "retry " << n + 1;
    EXPECT_LE(d, ceilings[n]) << "retry " << n + 1;
    EXPECT_EQ(backoff.retries(), static_cast<int>(n + 1));
  }
}

TEST(BackoffStrategy, ResetStartsOverFromTheBase) {
  BackoffStrategy backoff(BackoffPolicy{100ms, 1min, 100ms}, 1);
  for (int i = 0; i < 8; ++i) backoff.next_delay();
  backoff.reset();
  EXPECT_EQ(backoff.retries(), 0);
  // floor == base: the first delay after a reset can only be the base.
  EXPECT_EQ(backoff.next_delay(), 100ms);
}

TEST(BackoffStrategy, DrawsWhatThePolicyDrawsFromTheSameSeed) {
  BackoffStrategy strategy(kStrategyTestPolicy, 42);
  BackoffJitter jitter(42);
  for (int retries = 0; retries < 20; ++retries) {
    EXPECT_EQ(strategy.next_delay(), kStrategyTestPolicy.delay(retries, jitter)) << retries;
  }
}

TEST(BackoffStrategy, LoopsSharingOneJitterSourceCountApart) {
  BackoffJitter shared(7);
  BackoffStrategy a(kStrategyTestPolicy, shared), b(kStrategyTestPolicy, shared);
  a.next_delay();
  a.next_delay();
  b.next_delay();
  EXPECT_EQ(a.retries(), 2);
  EXPECT_EQ(b.retries(), 1);
  a.reset();
  EXPECT_EQ(b.retries(), 1);
}

}  // namespace
}  // namespace cn
