#include "labeler/labeling/unlabeled_tracker.h"

#include <algorithm>

namespace cn::labeler {

UnlabeledTracker::UnlabeledTracker(Clock& clock, LabelingMetrics& metrics)
    : clock_(clock), metrics_(metrics) {}

void UnlabeledTracker::waiting(const std::string& alloc_id, long long since_unix_ms) {
  const long long now = unix_millis(clock_.wall_now());
  MutexLock lock(mu_);
  auto [it, inserted] = waits_.try_emplace(alloc_id, Wait{since_unix_ms, now});
  if (!inserted) {
    it->second.since_unix_ms = std::min(it->second.since_unix_ms, since_unix_ms);
    it->second.noted_unix_ms = now;
  }
  publish_locked();
}

void UnlabeledTracker::done(const std::string& alloc_id) {
  MutexLock lock(mu_);
  waits_.erase(alloc_id);
  publish_locked();
}

void UnlabeledTracker::replace(const std::map<std::string, long long>& waiting,
                               long long pass_started_unix_ms) {
  const long long now = unix_millis(clock_.wall_now());
  MutexLock lock(mu_);
  std::erase_if(waits_, [&](const auto& kv) {
    return kv.second.noted_unix_ms < pass_started_unix_ms && !waiting.contains(kv.first);
  });
  for (const auto& [id, since] : waiting) {
    auto [it, inserted] = waits_.try_emplace(id, Wait{since, now});
    if (!inserted) it->second.since_unix_ms = std::min(it->second.since_unix_ms, since);
  }
  publish_locked();
}

void UnlabeledTracker::publish() {
  MutexLock lock(mu_);
  publish_locked();
}

std::size_t UnlabeledTracker::size() const {
  MutexLock lock(mu_);
  return waits_.size();
}

void UnlabeledTracker::publish_locked() {
  long long oldest = 0;
  if (!waits_.empty()) {
    const long long now = unix_millis(clock_.wall_now());
    long long since = now;
    for (const auto& [id, wait] : waits_) since = std::min(since, wait.since_unix_ms);
    oldest = std::max(0LL, now - since);  // a wall clock stepped back never shows a negative wait
  }
  metrics_.unlabeled_allocations().Set(static_cast<double>(waits_.size()));
  metrics_.unlabeled_oldest_seconds().Set(static_cast<double>(oldest) / 1000.0);
}

}  // namespace cn::labeler
