#include "common/util/wakeup.h"

namespace cn {

void Wakeup::kick() {
  MutexLock lock(mu_);
  kicked_ = true;
  wake_.request_stop();
}

bool Wakeup::take() {
  MutexLock lock(mu_);
  const bool was = kicked_;
  kicked_ = false;
  return was;
}

bool Wakeup::wait_until(Clock& clock, MonoTime deadline, std::stop_token stop) {
  std::stop_token woken;
  {
    MutexLock lock(mu_);
    if (kicked_) {
      kicked_ = false;
      return true;
    }
    // A stop_source stays stopped: a fresh one for each wait that may need waking.
    if (wake_.stop_requested()) wake_ = std::stop_source{};
    woken = wake_.get_token();
  }
  {
    std::stop_callback on_stop(stop, [this] {
      MutexLock lock(mu_);
      wake_.request_stop();
    });
    clock.sleep_until(deadline, woken);
  }
  return take();
}

}  // namespace cn
