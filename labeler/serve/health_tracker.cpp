#include "labeler/serve/health_tracker.h"

namespace cn::labeler {
namespace {

std::size_t index_of(Dependency dependency) {
  return dependency == Dependency::kCilium ? 0 : 1;
}

}  // namespace

const char* to_string(Dependency dependency) {
  switch (dependency) {
    case Dependency::kCilium:
      return "Cilium agent";
    case Dependency::kNomad:
      return "Nomad";
  }
  return "?";
}

HealthTracker::HealthTracker(Clock& clock, std::chrono::seconds unhealthy_after)
    : clock_(clock), unhealthy_after_(unhealthy_after) {}

void HealthTracker::started() {
  MutexLock lock(mu_);
  started_ = true;
}

void HealthTracker::succeeded(Dependency dependency) {
  MutexLock lock(mu_);
  outages_[index_of(dependency)].reset();
}

void HealthTracker::failed(Dependency dependency, std::string reason) {
  MutexLock lock(mu_);
  auto& outage = outages_[index_of(dependency)];
  if (outage) {
    outage->reason = std::move(reason);
  } else {
    outage = Outage{clock_.now(), std::move(reason)};
  }
}

HealthVerdict HealthTracker::verdict() const {
  MutexLock lock(mu_);
  if (!started_) return {false, "starting"};
  const MonoTime now = clock_.now();
  std::string reason;
  for (Dependency dependency : {Dependency::kCilium, Dependency::kNomad}) {
    const auto& outage = outages_[index_of(dependency)];
    if (!outage || now - outage->since <= unhealthy_after_) continue;
    auto seconds = std::chrono::duration_cast<std::chrono::seconds>(now - outage->since).count();
    if (!reason.empty()) reason += "; ";
    reason += std::string(to_string(dependency)) + " unreachable for " + std::to_string(seconds) +
              " s: " + outage->reason;
  }
  return {reason.empty(), reason};
}

}  // namespace cn::labeler
