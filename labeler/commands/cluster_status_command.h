#pragma once
// `cilium-nomad-labeler cluster status`: what the cluster duties see in etcd, read-only, from any
// node with the kvstore configuration: the leader, the nodes reporting identities in use, and how
// many identities, identity users, locks and node entries the kvstore holds; with this cluster's
// identity range, how much of it the identities use (the headroom).
#include <ostream>
#include <string>

#include "common/etcd/etcd_api.h"
#include "common/util/clock.h"
#include "common/util/result.h"
#include "labeler/cluster/identity_range.h"

namespace cn::labeler::cluster {

// Exit code 0, or 1 when etcd could not be read (the reason on `err`). `range` unknown: the
// headroom says why instead of guessing a range.
int render_cluster_status(etcd::EtcdApi& etcd, const std::string& cluster_name,
                          const Result<IdentityRange>& range, bool as_json, Clock& clock,
                          std::ostream& out, std::ostream& err);

}  // namespace cn::labeler::cluster
