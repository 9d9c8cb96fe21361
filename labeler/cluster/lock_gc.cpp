#include "labeler/cluster/lock_gc.h"

#include <vector>

#include <spdlog/spdlog.h>

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

LockGcReport LockGc::run_pass(const LeaderFence& fence, std::stop_token stop) {
  LockGcReport report;
  ScanCounters counters;
  const std::map<std::string, Seen> holders = holders_of_previous();
  std::map<std::string, Seen> current;
  struct Stale {
    std::string key;
    Seen seen;
  };
  std::vector<Stale> stale;
  auto read =
      scan_prefix(etcd_, clock_, options_.scan, kvstore::kIdentityLockPrefix, report.revision,
                  counters, stop, [&](const etcd::KeyValue& kv) {
                    ++report.scanned;
                    const Seen seen{kv.mod_revision, kv.lease};
                    auto held = holders.find(kv.key);
                    if (held != holders.end() && held->second.mod_revision == seen.mod_revision &&
                        held->second.lease == seen.lease) {
                      stale.push_back(Stale{kv.key, seen});
                    } else {
                      current.emplace(kv.key, seen);
                    }
                  });
  report.pages = counters.pages;
  report.etcd_requests = counters.requests;
  if (!read) {
    report.end = scan_stop(read.error());
    report.detail = read.error().message;
    log_->warn("lock gc round ended early: end={} detail=\"{}\"", to_string(report.end),
               report.detail);
    return report;
  }
  report.stale = static_cast<std::int64_t>(stale.size());

  for (std::size_t i = 0; i < stale.size(); ++i) {
    const auto& [key, seen] = stale[i];
    if (options_.dry_run) {
      ++report.would_delete;
      log_->info("lock gc dry run, would delete stale lock: key=\"{}\" lease={:x}", key,
                 seen.lease);
      current.emplace(key, seen);
      continue;
    }
    std::vector<etcd::Compare> own{mod_revision_is(key, seen.mod_revision)};
    own.push_back(etcd::Compare{
        key, {}, etcd::CompareTarget::lease, etcd::CompareResult::equal, seen.lease, {}});
    ++report.etcd_requests;
    auto outcome = run_fenced(etcd_, fence, std::move(own), {delete_key_op(key)},
                              Deadline(clock_.now() + options_.scan.call_timeout, stop));
    if (!outcome || *outcome == FencedOutcome::fence_lost) {
      if (outcome) ++report.refused;
      auto [end, detail] = write_stop(outcome);
      report.end = end;
      report.detail = std::move(detail);
      // Like the operator, a lock not deleted stays remembered; so do the ones not yet tried.
      for (std::size_t j = i; j < stale.size(); ++j) current.emplace(stale[j].key, stale[j].seen);
      break;
    }
    if (*outcome == FencedOutcome::applied) {
      ++report.deleted;
      log_->warn(
          "lock gc removed a stale lock (its holder kept it unchanged for a round): "
          "key=\"{}\" lease={:x}",
          key, seen.lease);
    } else {
      ++report.refused;
    }
  }
  previous_ = std::move(current);
  if (report.end != PassEnd::complete) {
    log_->warn("lock gc round ended early: end={} detail=\"{}\"", to_string(report.end),
               report.detail);
  }
  return report;
}

}  // namespace cn::labeler::cluster
