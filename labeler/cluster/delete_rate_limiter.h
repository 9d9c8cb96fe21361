#pragma once
// At most N deletions a minute, as cilium-operator limits its identity GC (2,500 a minute by
// default, `identity-gc-rate-limit` over `identity-gc-rate-interval`): agents recompute policy
// for every identity that disappears, so a burst of deletions is a burst of work on every node.
// A fixed one-minute window that opens at its first deletion; the deletion after the Nth waits for
// the window to close. Time and waits are on the injected clock.
#include <chrono>
#include <stop_token>

#include "common/util/clock.h"

namespace cn::labeler::cluster {

class DeleteRateLimiter {
 public:
  // per_minute 0: no limit.
  DeleteRateLimiter(Clock& clock, int per_minute);

  // Takes one deletion from the current window, waiting for the next window when this one is
  // used up. False when the stop token ended the wait (no deletion taken). One thread at a time.
  bool acquire(const std::stop_token& stop);
  // How many acquire() calls would succeed now without waiting (a large number without a
  // limit), so that a caller can send what it holds before it waits.
  int available() const;

 private:
  static constexpr std::chrono::minutes kWindow{1};
  Clock& clock_;
  int per_minute_;
  MonoTime window_start_{};
  int used_ = 0;
};

}  // namespace cn::labeler::cluster
