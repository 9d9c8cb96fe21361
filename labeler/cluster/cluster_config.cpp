#include "labeler/cluster/cluster_config.h"

#include <spdlog/spdlog.h>

#include "labeler/cluster/fenced_txn.h"
#include "labeler/cluster/identity_range.h"

namespace cn::labeler::cluster {

std::string cluster_config_key(std::string_view cluster) {
  std::string key = "cilium/cluster-config/";
  key.append(cluster);
  return key;
}

std::string cluster_config_value(std::uint32_t cluster_id, std::uint32_t max_connected_clusters) {
  return R"({"id":)" + std::to_string(cluster_id) + R"(,"capabilities":{"maxConnectedClusters":)" +
         std::to_string(max_connected_clusters) + "}}";
}

ClusterConfigWriter::ClusterConfigWriter(etcd::EtcdApi& etcd, Clock& clock,
                                         ClusterConfigOptions options,
                                         std::shared_ptr<spdlog::logger> log)
    : etcd_(etcd),
      clock_(clock),
      options_(std::move(options)),
      log_(log ? std::move(log) : spdlog::default_logger()),
      key_(cluster_config_key(options_.cluster_name)) {
  if (!options_.cluster_id || *options_.cluster_id == 0) {
    why_not_ = "no cluster ID: this cluster is in no ClusterMesh";
    return;
  }
  if (!options_.max_connected_clusters) {
    why_not_ = "--max-connected-clusters not set: peers refuse a wrong maximum";
    return;
  }
  // The pair the agent accepts, and nothing else: peers check the ID against their maximum
  // (types.go ValidateRemoteConfig).
  auto range = identity_range(*options_.cluster_id, *options_.max_connected_clusters);
  if (!range) {
    why_not_ = range.error().message;
    return;
  }
  value_ = cluster_config_value(*options_.cluster_id, *options_.max_connected_clusters);
}

ClusterConfigReport ClusterConfigWriter::run_pass(const LeaderFence& fence, std::stop_token stop) {
  ClusterConfigReport report;
  if (value_.empty()) {
    if (!why_not_logged_) {
      log_->info("cluster-config key not written: key=\"{}\" reason=\"{}\"", key_, why_not_);
      why_not_logged_ = true;
    }
    return report;
  }
  report.value = value_;
  const Deadline deadline(clock_.now() + options_.call_timeout, stop);
  etcd::RangeRequest read;
  read.key = key_;
  ++report.etcd_requests;
  auto page = etcd_.range(read, deadline);
  if (!page) {
    report.end =
        page.error().kind == ErrorKind::cancelled ? PassEnd::stopped : PassEnd::read_failed;
    report.detail = page.error().message;
    log_->warn("cluster-config key not read: key=\"{}\" error=\"{}\"", key_, report.detail);
    return report;
  }
  const etcd::KeyValue* current = page->kvs.empty() ? nullptr : &page->kvs.front();
  if (current != nullptr && current->value == value_ && current->lease == fence.lease) {
    report.action = ClusterConfigAction::kept;
    return report;
  }
  // A value other than ours on a lease other than ours: someone else's, never overwritten.
  // (A different value on our own lease can only be one this term wrote.)
  if (current != nullptr && current->value != value_ && current->lease != fence.lease) {
    report.action = ClusterConfigAction::not_ours;
    if (foreign_logged_ != current->value) {
      log_->warn(
          "cluster-config key held by another writer, left alone: key=\"{}\" value=\"{}\" "
          "lease=\"{:x}\"",
          key_, current->value, current->lease);
      foreign_logged_ = current->value;
    }
    return report;
  }
  foreign_logged_.clear();
  if (options_.dry_run) {
    report.action = ClusterConfigAction::would_write;
    log_->info("cluster-config dry run, would write: key=\"{}\" value=\"{}\"", key_, value_);
    return report;
  }
  // Absent: created only if still absent. Present (our value, or ours from this term): replaced
  // only if unchanged since the read.
  std::vector<etcd::Compare> own;
  if (current == nullptr) {
    own.push_back(etcd::Compare{
        key_, {}, etcd::CompareTarget::create_revision, etcd::CompareResult::equal, 0, {}});
  } else {
    own.push_back(mod_revision_is(key_, current->mod_revision));
  }
  std::vector<etcd::TxnOp> ops;
  ops.push_back(etcd::TxnOp{etcd::TxnOp::Kind::put, key_, {}, value_, fence.lease});
  ++report.etcd_requests;
  auto outcome = run_fenced(etcd_, fence, std::move(own), std::move(ops), deadline);
  if (!outcome || *outcome == FencedOutcome::fence_lost) {
    auto [end, detail] = write_stop(outcome);
    report.end = end;
    report.detail = std::move(detail);
    log_->warn("cluster-config key not written: key=\"{}\" end={} error=\"{}\"", key_,
               to_string(report.end), report.detail);
    return report;
  }
  if (*outcome == FencedOutcome::refused) {
    // Someone wrote or deleted it since the read: the next pass looks again.
    report.action = ClusterConfigAction::changed;
    log_->info("cluster-config key changed since read, left for the next pass: key=\"{}\"", key_);
    return report;
  }
  report.action = ClusterConfigAction::written;
  log_->info("cluster-config key written: key=\"{}\" value=\"{}\" lease=\"{:x}\"", key_, value_,
             fence.lease);
  return report;
}

}  // namespace cn::labeler::cluster
