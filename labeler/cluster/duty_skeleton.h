#pragma once
// One pass of a duty that deletes keys (identity GC, IP GC, lock GC, node reaping), in the order
// they all keep: scan → decide → fenced delete → report. The duty is a policy over this skeleton:
// it says what to read, what is due and what to log; the skeleton ends a pass whose reads failed
// before anything is decided, caps what is due, deletes it under the leader fence
// (fenced_deletes.h) or only counts it in a dry run, and keeps the counts every duty shares.
// Log lines stay in the policies so that each call site keeps its literal format
// (tests/unit/labeler/log_call_sites_test.cpp).
#include <cstddef>
#include <cstdint>
#include <expected>
#include <stop_token>
#include <string>
#include <vector>

#include "common/etcd/etcd_api.h"
#include "common/util/clock.h"
#include "labeler/cluster/delete_rate_limiter.h"
#include "labeler/cluster/duty_pass.h"
#include "labeler/cluster/fenced_deletes.h"
#include "labeler/cluster/leader_fence.h"
#include "labeler/cluster/paged_scan.h"

namespace cn::labeler::cluster {

// What every deleting duty's report holds; each duty's report adds the counts of its own rules.
struct DutyReport {
  PassEnd end = PassEnd::complete;
  std::string detail;           // why the pass ended early (the error or the doubt); else empty
  etcd::Revision revision = 0;  // the snapshot the pass read
  std::int64_t scanned = 0;     // keys of the duty's own kind read
  std::int64_t deleted = 0;
  std::int64_t would_delete = 0;   // dry run
  std::int64_t refused = 0;        // deletions etcd refused (a compare failed), plus a lost fence
  std::int64_t over_cap = 0;       // due, left for the next pass by the per-pass cap
  std::int64_t pages = 0;          // range answers read
  std::int64_t etcd_requests = 0;  // range and txn calls made
};

// A pass that ends before it deletes: how, and why.
struct DutyStop {
  PassEnd end = PassEnd::read_failed;
  std::string detail;
};
using DutyScan = std::expected<void, DutyStop>;
// A failed scan_prefix as the end of a pass.
DutyScan duty_scan(const Status& read);

// What one duty decides; the skeleton calls it in this order, on one thread.
class DutyPolicy {
 public:
  virtual ~DutyPolicy() = default;
  // Every read of the pass, at the revision the first page pins, counted into the report.
  virtual DutyScan scan(ScanCounters& counters, const std::stop_token& stop) = 0;
  // Called once every read was complete: advances the duty's memory and returns the deletions
  // due, in the order they should go. May write first (node reaping's markers) and end the pass
  // by setting the report's end, and then nothing is deleted.
  virtual std::vector<FencedDeletion> decide(const LeaderFence& fence,
                                             const std::stop_token& stop) = 0;
  // `due` deletions were due, more than the cap; the skeleton keeps the first ones.
  virtual void over_cap(std::size_t due) { (void)due; }
  virtual void would_delete(std::size_t i) = 0;  // dry run: counted already
  // etcd applied the deletion (counted already) or refused it on its own (it changed since the
  // read).
  virtual void deleted(std::size_t i, bool applied) = 0;
  // The pass ended before this deletion was sent, or without an answer to it.
  virtual void not_reached(std::size_t i) { (void)i; }
  // Every due deletion was attempted and the pass is still complete: what follows (node
  // reaping's marker removal) and the pass's summary line. May end the pass.
  virtual void complete(const LeaderFence& fence, const std::stop_token& stop) {
    (void)fence;
    (void)stop;
  }
  // The pass ended early (the report says how): its one warning.
  virtual void ended_early() = 0;
};

struct DutyDeletes {
  etcd::EtcdApi& etcd;
  Clock& clock;
  DeleteRateLimiter* limiter = nullptr;  // null: no limit
  FencedDeleteSettings settings;
  bool dry_run = false;
  std::int64_t max_per_pass = 0;  // 0: no cap
};

void run_duty_pass(DutyPolicy& policy, DutyReport& report, const DutyDeletes& deletes,
                   const LeaderFence& fence, const std::stop_token& stop);

}  // namespace cn::labeler::cluster
