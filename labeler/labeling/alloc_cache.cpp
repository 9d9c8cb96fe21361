#include "labeler/labeling/alloc_cache.h"

#include "labeler/labeling/identity_trust.h"

namespace cn::labeler {

AllocCache::AllocCache(std::vector<std::string> meta_keys, std::size_t capacity)
    : meta_keys_(meta_keys.begin(), meta_keys.end()), capacity_(capacity) {}

labels::AllocationIdentity AllocCache::keep_policy_meta(labels::AllocationIdentity identity) const {
  // Meta holds deploy times and commit hashes that change on every deploy; keeping only the keys
  // that can become labels keeps an entry small and its equality meaningful.
  for (auto* meta : {&identity.job_meta, &identity.group_meta}) {
    std::erase_if(*meta, [&](const auto& kv) { return !meta_keys_.contains(kv.first); });
  }
  return identity;
}

void AllocCache::observe_locked(const nomad::Allocation& alloc) {
  auto it = entries_.find(alloc.id);
  if (it != entries_.end() && it->second.modify_index > alloc.modify_index) return;  // older news
  if (alloc.is_terminal()) {
    if (it != entries_.end()) entries_.erase(it);
    return;
  }
  auto identity = alloc.job ? trusted_identity(NomadClaim{alloc}, alloc.id, TrustRules{})
                            : Result<labels::AllocationIdentity>(fail("no embedded job"));
  if (!identity) {
    // No Job (an event), or one that does not fit: whatever is stored may be stale now.
    if (it != entries_.end() && it->second.modify_index < alloc.modify_index) entries_.erase(it);
    return;
  }
  if (it != entries_.end()) {
    it->second = Entry{keep_policy_meta(std::move(*identity)), alloc.modify_index};
  } else if (entries_.size() < capacity_) {
    entries_.emplace(alloc.id, Entry{keep_policy_meta(std::move(*identity)), alloc.modify_index});
  }
}

void AllocCache::observe(const nomad::Allocation& alloc) {
  MutexLock lock(mu_);
  observe_locked(alloc);
}

void AllocCache::rebuild(const std::vector<nomad::Allocation>& allocations, std::uint64_t index) {
  MutexLock lock(mu_);
  std::set<std::string_view> listed;
  for (const auto& alloc : allocations) {
    listed.insert(alloc.id);
    observe_locked(alloc);
  }
  std::erase_if(entries_, [&](const auto& kv) {
    return !listed.contains(kv.first) && kv.second.modify_index <= index;
  });
}

void AllocCache::clear() {
  MutexLock lock(mu_);
  entries_.clear();
}

std::optional<labels::AllocationIdentity> AllocCache::identity(std::string_view alloc_id) const {
  MutexLock lock(mu_);
  auto it = entries_.find(std::string(alloc_id));
  if (it == entries_.end()) return std::nullopt;
  return it->second.identity;
}

std::size_t AllocCache::size() const {
  MutexLock lock(mu_);
  return entries_.size();
}

}  // namespace cn::labeler
