#pragma once
// Proof of leadership that every write of a cluster duty carries. A duty's txn puts compares()
// in front of its own: etcd applies the write only while the leader key is still the one this
// labeler created under its lease. A leader that stalled (SIGSTOP, a long GC pause, a partition)
// and lost the key while it could not tell finds its writes refused, never applied late.
#include <string>
#include <vector>

#include "common/etcd/etcd_api.h"

namespace cn::labeler::cluster {

struct LeaderFence {
  std::string key;                     // the leader key
  etcd::Revision create_revision = 0;  // when we created it
  etcd::LeaseId lease = 0;             // the lease it is attached to

  std::vector<etcd::Compare> compares() const {
    return {
        etcd::Compare{key,
                      {},
                      etcd::CompareTarget::create_revision,
                      etcd::CompareResult::equal,
                      create_revision,
                      {}},
        etcd::Compare{key, {}, etcd::CompareTarget::lease, etcd::CompareResult::equal, lease, {}},
    };
  }
};

}  // namespace cn::labeler::cluster
