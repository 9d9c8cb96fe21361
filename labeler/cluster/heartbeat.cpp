#include "labeler/cluster/heartbeat.h"

#include <cstdio>

#include <spdlog/spdlog.h>

#include "labeler/cluster/fenced_txn.h"
#include "labeler/cluster/kvstore_layout.h"

namespace cn::labeler::cluster {

std::string heartbeat_value(WallTime t) {
  using namespace std::chrono;
  const auto secs = floor<seconds>(t);
  const auto day = floor<days>(secs);
  const year_month_day date{day};
  const hh_mm_ss time{secs - day};
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04d-%02u-%02uT%02d:%02d:%02dZ", static_cast<int>(date.year()),
                static_cast<unsigned>(date.month()), static_cast<unsigned>(date.day()),
                static_cast<int>(time.hours().count()), static_cast<int>(time.minutes().count()),
                static_cast<int>(time.seconds().count()));
  return buf;
}

HeartbeatWriter::HeartbeatWriter(etcd::EtcdApi& etcd, Clock& clock, HeartbeatOptions options,
                                 std::shared_ptr<spdlog::logger> log)
    : etcd_(etcd),
      clock_(clock),
      options_(options),
      log_(log ? std::move(log) : spdlog::default_logger()) {}

HeartbeatReport HeartbeatWriter::write(const LeaderFence& fence, etcd::LeaseId lease,
                                       std::stop_token stop) {
  HeartbeatReport report;
  report.value = heartbeat_value(clock_.wall_now());
  if (options_.dry_run) {
    log_->info("heartbeat dry run, would write: key=\"{}\" value=\"{}\"", kvstore::kHeartbeatKey,
               report.value);
    return report;
  }
  if (stop.stop_requested()) {
    report.end = PassEnd::stopped;
    return report;
  }
  etcd::TxnOp put{
      etcd::TxnOp::Kind::put, std::string(kvstore::kHeartbeatKey), {}, report.value, lease};
  ++report.etcd_requests;
  auto result = etcd_.txn(fenced_txn(fence, {}, {std::move(put)}),
                          Deadline(clock_.now() + options_.call_timeout, stop));
  if (!result) {
    report.end =
        result.error().kind == ErrorKind::cancelled ? PassEnd::stopped : PassEnd::write_failed;
    report.detail = result.error().message;
    log_->warn("heartbeat not written: error=\"{}\"", report.detail);
    return report;
  }
  report.revision = result->revision;
  if (!result->succeeded) {
    // The fence is our only compare: a refusal means the leader key is no longer ours.
    report.end = PassEnd::fence_lost;
    report.detail = "the leader key is no longer ours";
    log_->warn("heartbeat not written: the leader key is no longer ours");
    return report;
  }
  report.written = true;
  return report;
}

}  // namespace cn::labeler::cluster
