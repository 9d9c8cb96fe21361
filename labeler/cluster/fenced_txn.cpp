#include "labeler/cluster/fenced_txn.h"

namespace cn::labeler::cluster {

etcd::TxnRequest fenced_txn(const LeaderFence& fence, std::vector<etcd::Compare> own,
                            std::vector<etcd::TxnOp> ops) {
  etcd::TxnRequest request;
  request.compare = fence.compares();
  for (auto& compare : own) request.compare.push_back(std::move(compare));
  request.success = std::move(ops);
  request.failure.push_back(etcd::TxnOp{etcd::TxnOp::Kind::range, fence.key, {}, {}, 0});
  return request;
}

bool fence_holds(const LeaderFence& fence, const etcd::TxnResult& refused) {
  // The failure branch has one op, the range of the leader key; without its answer we cannot
  // tell, and a duty that cannot tell must stop.
  if (refused.ranges.empty()) return false;
  const auto& kvs = refused.ranges.front().kvs;
  if (kvs.size() != 1 || kvs.front().key != fence.key) return false;
  return kvs.front().create_revision == fence.create_revision && kvs.front().lease == fence.lease;
}

Result<FencedOutcome> run_fenced(etcd::EtcdApi& etcd, const LeaderFence& fence,
                                 std::vector<etcd::Compare> own, std::vector<etcd::TxnOp> ops,
                                 Deadline deadline) {
  auto result = etcd.txn(fenced_txn(fence, std::move(own), std::move(ops)), std::move(deadline));
  if (!result) return std::unexpected(result.error());
  if (result->succeeded) return FencedOutcome::applied;
  return fence_holds(fence, *result) ? FencedOutcome::refused : FencedOutcome::fence_lost;
}

WriteStop write_stop(const Result<FencedOutcome>& outcome) {
  if (outcome) return WriteStop{PassEnd::fence_lost, "the leader key is no longer ours"};
  return WriteStop{
      outcome.error().kind == ErrorKind::cancelled ? PassEnd::stopped : PassEnd::write_failed,
      outcome.error().message};
}

etcd::TxnOp delete_key_op(std::string key) {
  return etcd::TxnOp{etcd::TxnOp::Kind::delete_range, std::move(key), {}, {}, 0};
}

etcd::Compare mod_revision_is(std::string key, etcd::Revision revision) {
  return etcd::Compare{
      std::move(key), {}, etcd::CompareTarget::mod_revision, etcd::CompareResult::equal,
      revision,       {}};
}

}  // namespace cn::labeler::cluster
