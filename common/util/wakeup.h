#pragma once
// A loop that sleeps until a deadline unless something asks it to run now: kick() from any
// thread ends the current or the next wait at once. Kicks that arrive while the loop works are
// kept as one, so a burst of them costs one more pass, not one each. The wait goes through the
// injected Clock, so tests drive it with simulated time.
#include <stop_token>

#include "common/util/clock.h"
#include "common/util/mutex.h"

namespace cn {

class Wakeup {
 public:
  // `kicked`: the first wait returns at once (a loop's first pass).
  explicit Wakeup(bool kicked = false) : kicked_(kicked) {}

  void kick() EXCLUDES(mu_);
  // Until `deadline`, a kick, or `stop`. True when a kick ended it (or one was pending); the
  // kick is consumed either way.
  bool wait_until(Clock& clock, MonoTime deadline, std::stop_token stop) EXCLUDES(mu_);
  // Consumes a pending kick without waiting. True when there was one.
  bool take() EXCLUDES(mu_);

 private:
  Mutex mu_;
  bool kicked_ GUARDED_BY(mu_);
  std::stop_source wake_ GUARDED_BY(mu_);
};

}  // namespace cn
