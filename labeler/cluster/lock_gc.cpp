#include "labeler/cluster/lock_gc.h"

#include <vector>

#include <spdlog/spdlog.h>

#include "labeler/cluster/duty_skeleton.h"
#include "labeler/cluster/fenced_txn.h"
#include "labeler/cluster/kvstore_layout.h"

namespace cn::labeler::cluster {

LockGc::LockGc(etcd::EtcdApi& etcd, Clock& clock, LockGcOptions options,
               std::shared_ptr<spdlog::logger> log)
    : etcd_(etcd),
      clock_(clock),
      options_(options),
      log_(log ? std::move(log) : spdlog::default_logger()) {}

std::map<std::string, LockGc::Seen> LockGc::holders_of_previous() const {
  // mutex path -> (lock key, as seen)
  std::map<std::string_view, std::pair<const std::string*, Seen>> oldest;
  for (const auto& [key, seen] : previous_) {
    auto [it, added] = oldest.try_emplace(kvstore::lock_path(key), &key, seen);
    if (!added && seen.mod_revision < it->second.second.mod_revision) it->second = {&key, seen};
  }
  std::map<std::string, Seen> holders;
  for (const auto& [path, holder] : oldest) holders.emplace(*holder.first, holder.second);
  return holders;
}

// Lock GC as a policy over the duty skeleton: one scan against the previous round's holders
// decides; each stale lock goes in its own txn (its compares are its holder's), without a rate
// limit.
class LockGc::Pass final : public DutyPolicy {
 public:
  Pass(LockGc& gc, LockGcReport& report) : gc_(gc), report_(report) {}

  DutyScan scan(ScanCounters& counters, const std::stop_token& stop) override {
    const std::map<std::string, Seen> holders = gc_.holders_of_previous();
    return duty_scan(
        scan_prefix(gc_.etcd_, gc_.clock_, gc_.options_.scan, kvstore::kIdentityLockPrefix,
                    report_.revision, counters, stop, [&](const etcd::KeyValue& kv) {
                      ++report_.scanned;
                      const Seen seen{kv.mod_revision, kv.lease};
                      auto held = holders.find(kv.key);
                      if (held != holders.end() && held->second.mod_revision == seen.mod_revision &&
                          held->second.lease == seen.lease) {
                        stale_.push_back(Stale{kv.key, seen});
                      } else {
                        current_.emplace(kv.key, seen);
                      }
                    }));
  }

  std::vector<FencedDeletion> decide(const LeaderFence& /*fence*/,
                                     const std::stop_token& /*stop*/) override {
    report_.stale = static_cast<std::int64_t>(stale_.size());
    // A lock not deleted (dry run, or not reached) is added back below.
    gc_.previous_ = std::move(current_);
    std::vector<FencedDeletion> deletions;
    deletions.reserve(stale_.size());
    for (const auto& [key, seen] : stale_) {
      deletions.push_back(FencedDeletion{
          key,
          {mod_revision_is(key, seen.mod_revision),
           etcd::Compare{
               key, {}, etcd::CompareTarget::lease, etcd::CompareResult::equal, seen.lease, {}}},
          {}});
    }
    return deletions;
  }

  void would_delete(std::size_t i) override {
    const auto& [key, seen] = stale_[i];
    gc_.log_->info("lock gc dry run, would delete stale lock: key=\"{}\" lease={:x}", key,
                   seen.lease);
    gc_.previous_.emplace(key, seen);
  }

  void deleted(std::size_t i, bool applied) override {
    if (!applied) return;
    const auto& [key, seen] = stale_[i];
    gc_.log_->warn(
        "lock gc removed a stale lock (its holder kept it unchanged for a round): "
        "key=\"{}\" lease={:x}",
        key, seen.lease);
  }

  // Like the operator, a lock not deleted stays remembered; so do the ones not yet tried.
  void not_reached(std::size_t i) override { gc_.previous_.emplace(stale_[i].key, stale_[i].seen); }

  void ended_early() override {
    gc_.log_->warn("lock gc round ended early: end={} detail=\"{}\"", to_string(report_.end),
                   report_.detail);
  }

 private:
  struct Stale {
    std::string key;
    Seen seen;
  };

  LockGc& gc_;
  LockGcReport& report_;
  std::map<std::string, Seen> current_;
  std::vector<Stale> stale_;
};

LockGcReport LockGc::run_pass(const LeaderFence& fence, std::stop_token stop) {
  LockGcReport report;
  Pass pass(*this, report);
  run_duty_pass(
      pass, report,
      DutyDeletes{etcd_, clock_, nullptr, {1, options_.scan.call_timeout}, options_.dry_run, 0},
      fence, stop);
  return report;
}

}  // namespace cn::labeler::cluster
