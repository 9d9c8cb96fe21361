#pragma once
// `cilium-nomad-labeler cluster status`: what the cluster duties see in etcd, read-only, from any
// node with the kvstore configuration: the leader, the nodes reporting identities in use, and how
// many identities, identity users, locks and node entries the kvstore holds.
#include <ostream>
#include <string>

#include "common/etcd/etcd_api.h"
#include "common/util/clock.h"

namespace cn::labeler::cluster {

// Exit code 0, or 1 when etcd could not be read (the reason on `err`).
int render_cluster_status(etcd::EtcdApi& etcd, const std::string& cluster_name, bool as_json,
                          Clock& clock, std::ostream& out, std::ostream& err);

}  // namespace cn::labeler::cluster
