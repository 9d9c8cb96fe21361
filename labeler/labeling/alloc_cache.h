#pragma once
// What the watch knows about this node's live allocations: the facts the labels are derived from
// (namespace, job, ParentID, group, the meta the label policy names), never the Job itself. A
// notification whose allocation is here is labeled without asking Nomad.
//
// Fed by whoever holds a Nomad answer with the Job: the node watch (every new or changed
// allocation), the reconcile (the whole node) and the workers' own GETs. An entry is replaced only
// by an answer at the same or a higher ModifyIndex, so a slow reader never puts back an older
// version than a faster one stored. Nomad updates an allocation in place when its job changes in
// a way that keeps it (new meta): its ModifyIndex goes up, the watch sees it within one round
// trip and both the entry and the endpoint's labels follow.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/labels/derive_labels.h"
#include "common/nomad/model/allocation.h"
#include "common/util/mutex.h"

namespace cn::labeler {

class AllocCache {
 public:
  // `meta_keys`: the label policy's; other meta is not kept. `capacity`: beyond it new entries
  // are refused (a miss costs one GET, never a wrong label).
  AllocCache(std::vector<std::string> meta_keys, std::size_t capacity = 8192);

  // Stores the allocation's identity if it is live and embeds its Job, forgets it when it is
  // terminal. Without a Job nothing is learned, and an entry older than the allocation's
  // ModifyIndex is dropped (events carry no Job: the allocation changed, the entry may be stale).
  void observe(const nomad::Allocation& alloc) EXCLUDES(mu_);
  // A full listing of the node at `index`: every allocation of it is observed, and entries it
  // does not list are dropped unless someone stored them from an answer newer than the listing.
  void rebuild(const std::vector<nomad::Allocation>& allocations, std::uint64_t index)
      EXCLUDES(mu_);
  // Nomad's index went backwards (a restore): nothing stored can be compared any more.
  void clear() EXCLUDES(mu_);

  std::optional<labels::AllocationIdentity> identity(std::string_view alloc_id) const EXCLUDES(mu_);
  std::size_t size() const EXCLUDES(mu_);

 private:
  struct Entry {
    labels::AllocationIdentity identity;
    std::uint64_t modify_index = 0;
  };
  void observe_locked(const nomad::Allocation& alloc) REQUIRES(mu_);
  labels::AllocationIdentity keep_policy_meta(labels::AllocationIdentity identity) const;

  const std::set<std::string> meta_keys_;
  const std::size_t capacity_;
  mutable Mutex mu_;
  std::unordered_map<std::string, Entry> entries_ GUARDED_BY(mu_);
};

}  // namespace cn::labeler
