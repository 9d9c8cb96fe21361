#include "labeler/cluster/duty_skeleton.h"

namespace cn::labeler::cluster {

DutyScan duty_scan(const Status& read) {
  if (read) return {};
  return std::unexpected(DutyStop{scan_stop(read.error()), read.error().message});
}

void run_duty_pass(DutyPolicy& policy, DutyReport& report, const DutyDeletes& deletes,
                   const LeaderFence& fence, const std::stop_token& stop) {
  // Scan: a read that failed or was cut short decides nothing.
  ScanCounters counters;
  auto scanned = policy.scan(counters, stop);
  report.pages = counters.pages;
  report.etcd_requests += counters.requests;
  if (!scanned) {
    report.end = scanned.error().end;
    report.detail = std::move(scanned.error().detail);
    policy.ended_early();
    return;
  }

  // Decide.
  std::vector<FencedDeletion> due = policy.decide(fence, stop);
  if (report.end != PassEnd::complete) {
    policy.ended_early();
    return;
  }
  if (deletes.max_per_pass > 0 && static_cast<std::int64_t>(due.size()) > deletes.max_per_pass) {
    report.over_cap = static_cast<std::int64_t>(due.size()) - deletes.max_per_pass;
    policy.over_cap(due.size());
    due.resize(static_cast<std::size_t>(deletes.max_per_pass));
  }

  // Fenced delete.
  if (deletes.dry_run) {
    for (std::size_t i = 0; i < due.size(); ++i) {
      ++report.would_delete;
      policy.would_delete(i);
    }
  } else {
    DeleteRateLimiter unlimited(deletes.clock, 0);
    std::vector<bool> reached(due.size(), false);
    auto result =
        delete_fenced(deletes.etcd, deletes.clock, deletes.limiter ? *deletes.limiter : unlimited,
                      fence, due, deletes.settings, stop, [&](std::size_t i, bool applied) {
                        reached[i] = true;
                        if (applied) ++report.deleted;
                        policy.deleted(i, applied);
                      });
    report.etcd_requests += result.requests;
    report.refused += result.refused;
    if (result.end != PassEnd::complete) {
      report.end = result.end;
      report.detail = std::move(result.detail);
      for (std::size_t i = 0; i < due.size(); ++i)
        if (!reached[i]) policy.not_reached(i);
      policy.ended_early();
      return;
    }
  }

  // Report.
  policy.complete(fence, stop);
  if (report.end != PassEnd::complete) policy.ended_early();
}

}  // namespace cn::labeler::cluster
