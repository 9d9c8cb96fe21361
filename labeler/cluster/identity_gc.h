#pragma once
// Identity GC for Cilium's kvstore allocator, which nobody runs without Kubernetes: a master key
// `cilium/state/identities/v1/id/<ID>` has no lease, so every label set ever seen would keep its
// identity forever. One pass reads a snapshot of the store and deletes a master key only if all
// of these hold (docs/ cluster duties):
//   - no value key references its label string, nor its ID, in this pass and in the previous
//     complete pass, and its ModRevision is the one the previous pass remembered (the
//     operator's two-pass rule, allocator RunGC);
//   - no running labeler reported the ID in use (in_use_report.h). A report that cannot be
//     parsed is counted and logged, and the pass goes on: its node's identities are kept by
//     that node's user keys alone, the evidence cilium-operator itself relies on;
//   - at delete time, in the same txn as the delete: the leader fence holds, the ModRevision is
//     unchanged and no key exists under `value/<labels>/`;
//   - the deletion rate stays under the limit.
// A failed or partial read deletes nothing and does not advance the two-pass memory: a candidate
// needs two COMPLETE passes.
//
// A user is any value key whose label string is the master key's, or whose value is its ID:
// stricter than every release (cilium 1.16-1.18 count any key under the label string; 1.19's
// RunGC only those whose value is the ID). One exception, 1.19's rule for duplicates (cilium
// PR #43287): when two master keys hold the same label string, a value key under that string
// names the one its node uses, so it is a user of that ID only. A duplicate no value key names
// by ID is collected by the same two passes; its delete txn compares that no key under
// `value/<labels>/` holds its ID (and fails, keeping it, if none is left there at all). Deleting an
// identity a live agent still uses is not fatal (the agent's allocator re-creates a master key it
// uses as soon as it sees it deleted, pkg/allocator/cache.go, and every 5 min), but it is a policy
// churn on every node: hence the rules above.
//
// One thread (the cluster duties' runner) calls run_pass; the object keeps the memory between
// passes.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <stop_token>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <spdlog/fwd.h>

#include "common/etcd/etcd_api.h"
#include "common/util/clock.h"
#include "labeler/cluster/delete_rate_limiter.h"
#include "labeler/cluster/duty_skeleton.h"
#include "labeler/cluster/identity_range.h"
#include "labeler/cluster/leader_fence.h"
#include "labeler/cluster/paged_scan.h"

namespace cn::labeler::cluster {

// Value keys under one label string, as one pass saw them (identity_gc.cpp).
struct GcLabelUse {
  std::int64_t users = 0;    // value keys under the string
  std::int64_t masters = 0;  // well-formed master keys holding the string, in any range
  bool not_an_id = false;    // one of the value keys holds no decimal ID
};

struct IdentityGcOptions {
  std::string cluster_name = "default";  // whose in-use reports to read
  ScanSettings scan;                     // 1,000 keys a page, 10 s a call
  int deletions_per_minute = 2500;       // 0: no limit
  bool dry_run = false;                  // log and count what would be deleted, write nothing
  // Deletions sent in one txn. etcd refuses a txn of more than 128 compares (--max-txn-ops);
  // each deletion takes two, the fence two more. A refused batch is retried one by one.
  std::size_t deletions_per_txn = 50;
  // The identities of the local cluster (identity_range.h), as the operator GCs only its own
  // range. An error (cluster ID or max-connected-clusters unknown or contradictory) makes every
  // pass end in doubt before it reads anything: no range is guessed.
  Result<IdentityRange> range = fail("identity range not configured");
};

struct IdentityGcReport : DutyReport {
  // scanned: master keys read
  std::int64_t value_keys = 0;                // value keys read
  std::int64_t value_keys_unknown_shape = 0;  // no `<labels>/<node>` after the prefix
  std::int64_t in_use_reports = 0;
  // Reports that could not be parsed: skipped, their nodes' identities kept by user keys only.
  std::int64_t unreadable_in_use_reports = 0;
  bool in_use_reports_read = false;  // every report was read (the count above is complete)
  std::int64_t referenced = 0;       // master keys a value key references (label string or ID)
  std::int64_t reported_in_use = 0;  // unreferenced, but a labeler reported the ID in use
  std::int64_t candidates = 0;       // unreferenced and unreported: remembered for the next pass
  // Candidates among them that share their label string with another master key while value
  // keys under it name only the other ID (the duplicate rule above).
  std::int64_t duplicate_candidates = 0;
  std::int64_t deleted_duplicates = 0;  // of `deleted`
  std::int64_t confirmed = 0;  // candidates the previous pass remembered with this ModRevision
  std::int64_t skipped_unknown_shape = 0;  // master keys: not a decimal ID, or not a label string
  std::int64_t skipped_out_of_range = 0;   // master keys outside this cluster's range
  // Headroom, from the same reads; set only when the master keys were read in full (counted):
  bool counted = false;
  std::int64_t in_range = 0;     // well-formed master keys in this cluster's range
  std::uint64_t range_size = 0;  // IDs the range holds; 0 while the range is unknown
  std::int64_t first_seen = 0;   // in range and not seen by the previous complete pass
  std::int64_t users_min = 0;    // users of one identity in range: fewest,
  std::int64_t users_max = 0;    // most,
  std::int64_t users_total = 0;  // and all of them (average: users_total / in_range)
};

class IdentityGc {
 public:
  IdentityGc(etcd::EtcdApi& etcd, Clock& clock, IdentityGcOptions options,
             std::shared_ptr<spdlog::logger> log = nullptr);

  IdentityGcReport run_pass(const LeaderFence& fence, std::stop_token stop);

  // Drops the two-pass memory (e.g. when leadership was lost): the next pass starts over.
  void forget() {
    remembered_.clear();
    seen_.clear();
    seen_baseline_ = false;
  }
  // A range that differs from the last one drops the memory: a candidate must have been found
  // unused twice within one range.
  void set_range(Result<IdentityRange> range);
  // Master keys the last complete pass found unused: deleted by the next one if still so.
  std::size_t remembered() const { return remembered_.size(); }

 private:
  // One pass as a policy over the duty skeleton (identity_gc.cpp).
  class Pass;
  struct Deletion {
    std::uint64_t id = 0;
    std::string labels;
    etcd::Revision mod_revision = 0;
    // An unused duplicate: the txn compares that no value key under its label string holds its
    // ID, instead of that none exists.
    bool duplicate = false;
  };

  etcd::EtcdApi& etcd_;
  Clock& clock_;
  IdentityGcOptions options_;
  std::shared_ptr<spdlog::logger> log_;
  DeleteRateLimiter limiter_;
  // ID -> the ModRevision of its master key when the last complete pass found it unused.
  // Bounded by the unused identities.
  std::unordered_map<std::uint64_t, etcd::Revision> remembered_;
  // ID -> CreateRevision of every master key in range on the last complete pass: a key not in
  // it (or re-created since) is a new identity. Empty before the first pass, which only records.
  std::unordered_map<std::uint64_t, etcd::Revision> seen_;
  bool seen_baseline_ = false;
  bool range_refusal_logged_ = false;  // the refusal is logged once, not every pass
};

}  // namespace cn::labeler::cluster
