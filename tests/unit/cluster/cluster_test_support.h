#pragma once
// Seeding the in-memory etcd with keys in the exact formats the Cilium agent writes (see
// labeler/cluster/kvstore_layout.h), and a leader key to fence the duties' writes with.
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include <gtest/gtest.h>

#include "common/util/clock.h"
#include "labeler/cluster/in_use_report.h"
#include "labeler/cluster/kvstore_layout.h"
#include "labeler/cluster/leader_fence.h"
#include "tests/support/manual_clock.h"
#include "tests/unit/cluster/in_memory_etcd.h"

namespace cn::testing {

// A label string as the agent writes it: `source:key=value;` per label, sorted by key.
inline constexpr std::string_view kFooLabels =
    "k8s:app=foo;k8s:io.kubernetes.pod.namespace=default;";
inline constexpr std::string_view kBarLabels =
    "k8s:app=bar;k8s:io.kubernetes.pod.namespace=default;";
inline constexpr std::string_view kLeaderKey = "cilium-nomad/default/leader";

class ClusterTest : public ::testing::Test {
 protected:
  ClusterTest() {
    // The agents' session lease (kvstore-lease-ttl, 15 min by default).
    agent_lease = must(etcd.grant_lease(std::chrono::minutes{15}, far()), "agent lease").id;
    fence = become_leader();
  }

  static Deadline far() { return Deadline(MonoTime::max()); }

  template <class T>
  static T must(Result<T> result, std::string_view what) {
    if (!result) {
      ADD_FAILURE() << what << ": " << result.error().message;
      return T{};
    }
    return *result;
  }

  // A leader key under a lease of its own, as the election creates it; the fence that names it.
  labeler::cluster::LeaderFence become_leader(std::chrono::seconds ttl = std::chrono::hours{24}) {
    const auto lease = must(etcd.grant_lease(ttl, far()), "leader lease").id;
    etcd.remove(kLeaderKey);
    must(etcd.put(kLeaderKey, "labeler-node-1", lease, far()), "leader key");
    const auto kv = etcd.get(kLeaderKey);
    return labeler::cluster::LeaderFence{std::string(kLeaderKey), kv ? kv->create_revision : 0,
                                         lease};
  }

  // Master key: create-only, no lease, the label string as value.
  etcd::Revision seed_identity(std::uint64_t id, std::string_view labels) {
    return must(etcd.put(labeler::cluster::kvstore::master_key(id), labels, 0, far()), "master");
  }
  // Value key: one per node using the identity, leased, the ID in decimal as value.
  void seed_user(std::string_view labels, std::string_view node_ip, std::uint64_t id,
                 etcd::LeaseId lease = 0) {
    must(
        etcd.put(user_key(labels, node_ip), std::to_string(id), lease ? lease : agent_lease, far()),
        "value key");
  }
  static std::string user_key(std::string_view labels, std::string_view node_ip) {
    return labeler::cluster::kvstore::value_key_prefix(labels) + std::string(node_ip);
  }
  void seed_in_use(std::string_view node, const std::vector<std::uint64_t>& ids) {
    must(etcd.put(labeler::cluster::in_use_key("default", node),
                  labeler::cluster::in_use_report_json(node, ids, clock.wall_now()), agent_lease,
                  far()),
         "in-use report");
  }

  bool exists(std::string_view key) { return etcd.get(key).has_value(); }
  bool identity_exists(std::uint64_t id) {
    return exists(labeler::cluster::kvstore::master_key(id));
  }

  ManualClock clock;
  InMemoryEtcd etcd{clock};
  etcd::LeaseId agent_lease = 0;
  labeler::cluster::LeaderFence fence;
};

}  // namespace cn::testing
