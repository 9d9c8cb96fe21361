#pragma once
// A random kvstore world for the cluster duties' property test (cluster_property_test.cpp): the
// keys Cilium agents, other labelers and other clusters write on one shared etcd, in the agents'
// exact formats (labeler/cluster/kvstore_layout.h, docs/cluster-duties.md "Key layout"), and the
// Nomad region's node list before and after some of its nodes are purged.
//
// The generator keeps the ground truth: every key it seeds is marked protected (must survive
// with its value) or deletable. Protected means "no duty may ever prove it deletable": in use,
// another cluster's or region's, live, or anything without proof. The truth is stated from what
// the world IS (who uses what, which node is gone), never from the duties' decision rules.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/etcd/etcd_api.h"
#include "common/nomad/model/node.h"

namespace cn::testing::property {

struct SeededKey {
  std::string key;
  std::string value;
  bool leased = false;       // on an agent's lease (master keys have none)
  bool is_protected = true;  // must be there with `value` after every run
  std::string what;          // why, for the failure message
};

struct Labeler {
  std::string node;                   // Nomad and Cilium node name
  std::string nomad_id;               // its Nomad node ID
  std::vector<std::uint64_t> in_use;  // identities its endpoints use (the Cilium double)
};

struct World {
  std::uint64_t seed = 0;
  std::uint32_t cluster_id = 0;
  std::uint32_t other_cluster_id = 0;
  std::uint32_t max_connected_clusters = 255;
  std::string region = "global";
  Labeler first;   // leads first, and is killed
  Labeler second;  // takes over
  // `lock_lease_hex` in a key or value stands for the agents' lease, known only once granted.
  std::vector<SeededKey> keys;
  std::vector<nomad::NodeStub> nomad_before;  // GET /v1/nodes until the purge
  std::vector<nomad::NodeStub> nomad_after;   // and after it

  std::size_t protected_count() const;
};

inline constexpr std::string_view kLeaseHexPlaceholder = "lock_lease_hex";

World generate_world(std::uint64_t seed);

// Deletes every key, then writes the world in etcd txns, leased keys on `agent_lease`.
Status seed_world(etcd::EtcdApi& etcd, const World& world, etcd::LeaseId agent_lease);

struct Verdict {
  std::vector<std::string> violations;  // one line per protected key missing or changed
  std::size_t deletable_deleted = 0;    // deletable keys gone: the duties did act
  std::size_t deletable = 0;
  // Per kind of deletable key (SeededKey::what): {deleted, seeded}.
  std::map<std::string, std::pair<std::size_t, std::size_t>> deletable_by_kind;
};
// Reads the whole store and holds it against the ground truth.
Result<Verdict> check_world(etcd::EtcdApi& etcd, const World& world, etcd::LeaseId agent_lease);

// The key as seeded, with the lease placeholder filled in.
std::string seeded_text(std::string_view text, etcd::LeaseId agent_lease);

}  // namespace cn::testing::property
