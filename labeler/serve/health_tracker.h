#pragma once
// What /healthz and the cilium_nomad_ready gauge say. The labeler is ready once its first
// reconcile is done, and stays ready unless the Cilium agent or Nomad has been unreachable for
// longer than a window: one failed call is a blip, but a dependency that has not answered once
// for the whole window means allocations started now will not get their labels.
//
// Pure bookkeeping on an injected clock; the callers decide which failures mean "unreachable"
// (a 404 for one allocation is an answer, a refused connection or a timeout is not).
#include <array>
#include <chrono>
#include <optional>
#include <string>

#include "common/util/clock.h"
#include "common/util/mutex.h"

namespace cn::labeler {

enum class Dependency { kCilium, kNomad };

const char* to_string(Dependency dependency);

struct HealthVerdict {
  bool ready = false;
  std::string reason;  // empty when ready
};

class HealthTracker {
 public:
  static constexpr std::chrono::seconds kDefaultUnhealthyAfter{60};

  explicit HealthTracker(Clock& clock,
                         std::chrono::seconds unhealthy_after = kDefaultUnhealthyAfter);

  // The first reconcile is done: from now on only dependency outages make the labeler not ready.
  void started();
  // A call to `dependency` was answered; ends any outage of it.
  void succeeded(Dependency dependency);
  // A call to `dependency` found it unreachable. The outage starts at the first such failure
  // after the last success; later failures only refresh the reason.
  void failed(Dependency dependency, std::string reason);

  HealthVerdict verdict() const;
  std::chrono::seconds unhealthy_after() const { return unhealthy_after_; }

 private:
  struct Outage {
    MonoTime since;
    std::string reason;
  };

  Clock& clock_;
  const std::chrono::seconds unhealthy_after_;
  mutable Mutex mu_;
  bool started_ GUARDED_BY(mu_) = false;
  std::array<std::optional<Outage>, 2> outages_ GUARDED_BY(mu_);  // indexed by Dependency
};

}  // namespace cn::labeler
