#pragma once
// Every write a cluster duty makes: one etcd txn whose compares are the leader fence
// (leader_fence.h) followed by the duty's own, and whose failure branch reads the leader key, so
// that a refusal tells "the key changed under us" (skip it, go on) from "we are no longer the
// leader" (stop the pass at once) without another request.
#include <vector>

#include "common/etcd/etcd_api.h"
#include "common/util/result.h"
#include "labeler/cluster/duty_pass.h"
#include "labeler/cluster/leader_fence.h"

namespace cn::labeler::cluster {

enum class FencedOutcome {
  applied,     // every compare held: the ops ran
  refused,     // the fence held, one of the duty's own compares failed: nothing written
  fence_lost,  // the leader key is gone or no longer ours (or the answer does not say): nothing
               // written
};

etcd::TxnRequest fenced_txn(const LeaderFence& fence, std::vector<etcd::Compare> own,
                            std::vector<etcd::TxnOp> ops);

// Whether the leader key, as the failure branch read it, is still the one `fence` names.
bool fence_holds(const LeaderFence& fence, const etcd::TxnResult& refused);

// An error when etcd gave no answer (the write may or may not have been applied).
[[nodiscard]] Result<FencedOutcome> run_fenced(etcd::EtcdApi& etcd, const LeaderFence& fence,
                                               std::vector<etcd::Compare> own,
                                               std::vector<etcd::TxnOp> ops, Deadline deadline);

// How a pass ends when its fenced write did not apply: `stopped` when our own stop cancelled it,
// `write_failed` when no answer came (its effect is unknown), `fence_lost`; with the detail the
// report carries. For an error or FencedOutcome::fence_lost only.
struct WriteStop {
  PassEnd end = PassEnd::write_failed;
  std::string detail;
};
WriteStop write_stop(const Result<FencedOutcome>& outcome);

etcd::TxnOp delete_key_op(std::string key);
etcd::Compare mod_revision_is(std::string key, etcd::Revision revision);

}  // namespace cn::labeler::cluster
