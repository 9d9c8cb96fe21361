#include "labeler/cluster/delete_rate_limiter.h"

namespace cn::labeler::cluster {

DeleteRateLimiter::DeleteRateLimiter(Clock& clock, int per_minute)
    : clock_(clock), per_minute_(per_minute) {}

bool DeleteRateLimiter::acquire(const std::stop_token& stop) {
  if (stop.stop_requested()) return false;
  if (per_minute_ <= 0) return true;
  MonoTime now = clock_.now();
  if (used_ > 0 && now >= window_start_ + kWindow) used_ = 0;
  if (used_ >= per_minute_) {
    if (!clock_.sleep_until(window_start_ + kWindow, stop)) return false;
    now = clock_.now();
    used_ = 0;
  }
  if (used_ == 0) window_start_ = now;
  ++used_;
  return true;
}

int DeleteRateLimiter::available() const {
  if (per_minute_ <= 0) return 1 << 30;
  if (used_ > 0 && clock_.now() >= window_start_ + kWindow) return per_minute_;
  return per_minute_ - used_;
}

}  // namespace cn::labeler::cluster
