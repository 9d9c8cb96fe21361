#include "tests/integration/cluster/property_world.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <random>
#include <set>

#include "labeler/cluster/in_use_report.h"
#include "labeler/cluster/kvstore_layout.h"
#include "labeler/cluster/node_reaper.h"

namespace cn::testing::property {

namespace {

namespace kv = labeler::cluster::kvstore;

// etcd's default --max-txn-ops is 128.
constexpr std::size_t kSeedOpsPerTxn = 100;
constexpr std::string_view kCiliumCluster = "default";

Deadline world_deadline() {
  return Deadline{std::chrono::steady_clock::now() + std::chrono::seconds{20}};
}

// Which IDs an agent of `cluster` hands out (pkg/clustermesh/types/types.go,
// ClusterInfo.Minimal/MaximumAllocationIdentity): the top bits are the cluster ID, and cluster 0
// starts above the reserved identities. A fact about the agents, stated here on its own.
struct AgentIdRange {
  std::uint64_t min = 0;
  std::uint64_t max = 0;
};
AgentIdRange agent_id_range(std::uint32_t cluster, std::uint32_t max_connected) {
  const int shift = max_connected == 511 ? 15 : 16;
  AgentIdRange r{static_cast<std::uint64_t>(cluster) << shift,
                 (static_cast<std::uint64_t>(cluster + 1) << shift) - 1};
  if (cluster == 0) r.min = 256;
  return r;
}

// A node as the world knows it.
enum class NodeFate {
  labeler,        // runs one of the two labelers: ready
  live,           // ready, initializing or disconnected in Nomad: alive
  down,           // Nomad lists it down: gone
  purged_now,     // listed down, then purged from Nomad during the run: gone
  purged_before,  // purged before the run; a leader of this region recorded it: gone
  other_region,   // a Nomad client of another region on the same etcd: not ours
  never_nomad,    // a Cilium node that never ran Nomad (a gateway): not ours
};

struct WorldNode {
  std::string name;
  std::string nomad_id;
  std::string host_ip;
  NodeFate fate = NodeFate::live;
  std::string status;  // Nomad's, for listed nodes
  bool has_entry = true;
};

bool node_is_gone(const WorldNode& n) {
  return n.fate == NodeFate::down || n.fate == NodeFate::purged_now ||
         n.fate == NodeFate::purged_before;
}

std::string node_entry_json(const WorldNode& n, std::uint32_t cluster_id, int index) {
  // Go's encoding of pkg/node/types.Node: Go field names, the fields the agent fills.
  char buf[512];
  std::snprintf(
      buf, sizeof buf,
      R"({"Name":"%s","Cluster":"default","IPAddresses":[{"Type":"InternalIP","IP":"%s"},)"
      R"({"Type":"CiliumInternalIP","IP":"10.%d.0.1"}],"IPv4AllocCIDR":{"IP":"10.%d.0.0",)"
      R"("Mask":"//8AAA=="},"IPv6AllocCIDR":null,"IPv4HealthIP":"10.%d.0.20",)"
      R"("IPv6HealthIP":"","ClusterID":%u,"Source":"local","EncryptionKey":0,)"
      R"("Labels":{},"NodeIdentity":0,"WireguardPubKey":""})",
      n.name.c_str(), n.host_ip.c_str(), index, index, index, cluster_id);
  return buf;
}

std::string ip_pair_json(std::string_view pod_ip, std::string_view host_ip, std::uint64_t id,
                         std::string_view node) {
  // pkg/identity.IPIdentityPair as the agent's ipcache writes it.
  char buf[384];
  std::snprintf(buf, sizeof buf,
                R"({"IP":"%.*s","Mask":null,"HostIP":"%.*s","ID":%llu,"Key":0,)"
                R"("Metadata":"cilium-global:default:%.*s:1234"})",
                static_cast<int>(pod_ip.size()), pod_ip.data(), static_cast<int>(host_ip.size()),
                host_ip.data(), static_cast<unsigned long long>(id), static_cast<int>(node.size()),
                node.data());
  return buf;
}

std::string labels_for(int n, std::mt19937_64& rng) {
  // Label strings as the agent writes them, sorted by key; some hold a '/', so a user key's
  // label string is everything up to its LAST '/'.
  switch (rng() % 3) {
    case 0:
      return "k8s:app=svc-" + std::to_string(n) + ";k8s:io.kubernetes.pod.namespace=default;";
    case 1:
      return "k8s:app.kubernetes.io/name=svc-" + std::to_string(n) +
             ";k8s:io.kubernetes.pod.namespace=prod;";
    default:
      return "nomad:job=web-" + std::to_string(n) + ";nomad:namespace=default;nomad:task=t;";
  }
}

class WorldBuilder {
 public:
  explicit WorldBuilder(std::uint64_t seed) : rng_(seed) { world_.seed = seed; }

  World build() {
    world_.max_connected_clusters = chance(2) ? 255 : 511;
    world_.cluster_id = static_cast<std::uint32_t>(pick(0, 4));
    do {
      world_.other_cluster_id = static_cast<std::uint32_t>(pick(0, 6));
    } while (world_.other_cluster_id == world_.cluster_id);
    make_nodes();
    make_identities();
    make_other_keys();
    std::shuffle(world_.keys.begin(), world_.keys.end(), rng_);
    return std::move(world_);
  }

 private:
  int pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  bool chance(int one_in) { return rng_() % static_cast<std::uint64_t>(one_in) == 0; }

  void add(std::string key, std::string value, bool leased, bool is_protected, std::string what) {
    // Two agents of one node using one identity write one user key.
    if (auto seen = index_.find(key); seen != index_.end()) {
      world_.keys[seen->second].is_protected |= is_protected;
      return;
    }
    index_.emplace(key, world_.keys.size());
    world_.keys.push_back(
        SeededKey{std::move(key), std::move(value), leased, is_protected, std::move(what)});
  }

  WorldNode& new_node(std::string prefix, NodeFate fate, int subnet) {
    WorldNode n;
    const int i = static_cast<int>(nodes_.size()) + 1;
    n.name = std::move(prefix) + std::to_string(i);
    char id[64];
    std::snprintf(id, sizeof id, "%08x-0000-4000-8000-%012llx", static_cast<unsigned>(i),
                  static_cast<unsigned long long>(world_.seed & 0xffffffffffffULL));
    n.nomad_id = id;
    n.host_ip = "192.168." + std::to_string(subnet) + "." + std::to_string(i);
    n.fate = fate;
    nodes_.push_back(std::move(n));
    return nodes_.back();
  }

  void make_nodes() {
    new_node("labeler-a-", NodeFate::labeler, 0).status = "ready";
    new_node("labeler-b-", NodeFate::labeler, 0).status = "ready";
    const char* live_status[] = {"ready", "ready", "initializing", "disconnected"};
    for (int i = pick(0, 4); i > 0; --i)
      new_node("client-", NodeFate::live, 0).status = live_status[pick(0, 3)];
    for (int i = pick(0, 5); i > 0; --i) {
      WorldNode& n = new_node("client-", NodeFate::down, 0);
      n.status = "down";
      n.has_entry = !chance(5);  // its lease may already have gone
    }
    for (int i = pick(0, 3); i > 0; --i)
      new_node("client-", NodeFate::purged_now, 0).status = "down";
    for (int i = pick(0, 2); i > 0; --i) new_node("client-", NodeFate::purged_before, 0);
    for (int i = pick(0, 3); i > 0; --i) new_node("eu-client-", NodeFate::other_region, 1);
    for (int i = pick(0, 3); i > 0; --i) new_node("gateway-", NodeFate::never_nomad, 2);

    world_.first = Labeler{nodes_[0].name, nodes_[0].nomad_id, {}};
    world_.second = Labeler{nodes_[1].name, nodes_[1].nomad_id, {}};

    int index = 0;
    for (const WorldNode& n : nodes_) {
      ++index;
      const bool listed_before = n.fate == NodeFate::labeler || n.fate == NodeFate::live ||
                                 n.fate == NodeFate::down || n.fate == NodeFate::purged_now;
      if (listed_before)
        world_.nomad_before.push_back(nomad::NodeStub{n.nomad_id, n.name, n.status});
      if (listed_before && n.fate != NodeFate::purged_now)
        world_.nomad_after.push_back(nomad::NodeStub{n.nomad_id, n.name, n.status});
      if (n.has_entry) {
        const bool ours_and_gone = node_is_gone(n);
        add(std::string(kv::node_prefix(kCiliumCluster)) + n.name,
            node_entry_json(n, world_.cluster_id, index), true, !ours_and_gone,
            ours_and_gone ? "node entry of a gone node of this region"
                          : "node entry of a live node, another region's or a non-Nomad node");
      }
      // A leader of this region recorded the purged-before node when Nomad listed it; another
      // region's leader records its own nodes.
      if (n.fate == NodeFate::purged_before) {
        add(labeler::cluster::nomad_node_marker_key(kCiliumCluster, n.name),
            labeler::cluster::nomad_node_marker_json(
                {n.nomad_id, n.name, world_.region, "2026-12-01T10:00:00Z"}),
            false, false, "this region's marker of a purged node");
      }
      if (n.fate == NodeFate::other_region && chance(2)) {
        add(labeler::cluster::nomad_node_marker_key(kCiliumCluster, n.name),
            labeler::cluster::nomad_node_marker_json(
                {n.nomad_id, n.name, "eu-west", "2026-12-01T10:00:00Z"}),
            false, true, "another region's marker");
      }
    }
    // Another Cilium cluster name on the same etcd: never ours.
    if (chance(2)) {
      WorldNode other{"k8s-worker-1", "", "192.168.3.1", NodeFate::never_nomad, "", true};
      std::string entry = node_entry_json(other, world_.other_cluster_id, 250);
      const auto at = entry.find("\"Cluster\":\"default\"");
      entry.replace(at, 19, "\"Cluster\":\"k8s-east\"");
      add(kv::node_prefix("k8s-east") + other.name, entry, true, true,
          "another Cilium cluster's node entry");
    }
  }

  std::uint64_t fresh_id(const AgentIdRange& r) {
    for (;;) {
      // Mostly near the bottom of the range, where allocators start.
      const std::uint64_t span = std::min<std::uint64_t>(r.max - r.min, 4000);
      const std::uint64_t id = r.min + rng_() % (span + 1);
      if (used_ids_.insert(id).second) return id;
    }
  }

  void user_key(const std::string& labels, const WorldNode& n, std::uint64_t id) {
    add(kv::value_key_prefix(labels) + n.host_ip, std::to_string(id), true, true,
        "an agent's user key");
  }

  void make_identities() {
    const AgentIdRange ours = agent_id_range(world_.cluster_id, world_.max_connected_clusters);
    const AgentIdRange theirs =
        agent_id_range(world_.other_cluster_id, world_.max_connected_clusters);
    std::vector<const WorldNode*> with_agents;  // nodes whose agents hold user keys
    for (const WorldNode& n : nodes_)
      if (n.fate != NodeFate::purged_before) with_agents.push_back(&n);
    // The node whose labeler writes a report nobody can parse; its node's identities are still
    // held by its agent's user keys, as every agent's are.
    const WorldNode* garbled = nullptr;
    std::map<const WorldNode*, std::vector<std::uint64_t>> reports;
    for (const WorldNode& n : nodes_)
      if (n.fate == NodeFate::live && chance(2)) reports[&n];
    if (!reports.empty() && chance(2)) garbled = reports.begin()->first;

    int label_n = 0;
    const int identities = pick(3, 14);
    for (int i = 0; i < identities; ++i) {
      const std::string labels = labels_for(++label_n, rng_);
      const bool other_cluster = chance(4);
      const std::uint64_t id = fresh_id(other_cluster ? theirs : ours);
      // 0: unused; 1: user keys; 2: a report only; 3: both.
      const int use = pick(0, 3);
      const bool used = use != 0;
      if (used && !other_cluster) in_use_ids_.push_back(id);
      add(kv::master_key(id), labels, false, used || other_cluster,
          other_cluster ? "another cluster's identity"
          : used        ? "an identity in use"
                        : "an unused identity of this cluster");
      if (use == 1 || use == 3) {
        for (int u = pick(1, 3); u > 0; --u) {
          const WorldNode* n = with_agents[rng_() % with_agents.size()];
          user_key(labels, *n, id);
          if (reports.contains(n)) reports[n].push_back(id);
          if (n->fate == NodeFate::labeler) labeler_ids(*n).push_back(id);
        }
      }
      if ((use == 2 || use == 3) && !reports.empty()) {
        auto it = reports.begin();
        std::advance(it, static_cast<long>(rng_() % reports.size()));
        if (it->first == garbled) {
          user_key(labels, *it->first, id);  // a garbled report is not a witness
        }
        it->second.push_back(id);
      } else if (use == 2) {
        // No labeler to report it: the agent's user key is the witness.
        user_key(labels, *with_agents[rng_() % with_agents.size()], id);
      }
      if (chance(3)) {
        // A lock an allocating agent took and never released: nothing protects it.
        add(std::string(kv::kIdentityLockPrefix) + labels + "/" + std::string(kLeaseHexPlaceholder),
            "", true, false, "a stale allocation lock");
      }
    }
    // The same label string under two IDs (two agents raced the allocation): one is used, the
    // other nobody references by ID.
    for (int d = pick(0, 2); d > 0; --d) {
      const std::string labels = labels_for(++label_n, rng_);
      const std::uint64_t used_id = fresh_id(ours);
      const std::uint64_t spare_id = fresh_id(ours);
      add(kv::master_key(used_id), labels, false, true, "the used one of a duplicate pair");
      in_use_ids_.push_back(used_id);
      add(kv::master_key(spare_id), labels, false, false, "the unused one of a duplicate pair");
      const WorldNode* n = with_agents[rng_() % with_agents.size()];
      user_key(labels, *n, used_id);
      if (n->fate == NodeFate::labeler) labeler_ids(*n).push_back(used_id);
      if (reports.contains(n)) reports[n].push_back(used_id);
    }
    // No proof of anything: not the agents' format.
    if (chance(3))
      add(kv::master_key(fresh_id(ours)), "garbage", false, true, "a master key of unknown shape");
    if (chance(3))
      add(std::string(kv::kIdentityIdPrefix) + "0" + std::to_string(ours.min + 7), "k8s:app=x;",
          false, true, "a master key with a non-canonical ID");
    if (chance(3))
      add(std::string(kv::kIdentityLockPrefix) + "id/" + std::to_string(ours.min) + "/" +
              std::string(kLeaseHexPlaceholder),
          "", true, false, "a stale GC lock");

    for (auto& [n, ids] : reports) {
      std::sort(ids.begin(), ids.end());
      ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
      add(labeler::cluster::in_use_key(kCiliumCluster, n->name),
          n == garbled ? R"({"node":")" + n->name + R"(","identities":"many"})"
                       : labeler::cluster::in_use_report_json(
                             n->name, ids, WallTime{std::chrono::seconds{1'800'000'000}}),
          true, true, n == garbled ? "a malformed in-use report" : "a labeler's in-use report");
    }

    // The ipcache: one key per endpoint IP, with the identity its endpoint uses (one in use, so
    // that no key of the ipcache makes a deletable identity used). A key of a gone node of this
    // region is stale.
    int pod = 0;
    for (const WorldNode& n : nodes_) {
      if (in_use_ids_.empty()) break;
      if (n.fate == NodeFate::purged_before && chance(2)) continue;
      for (int k = pick(0, 2); k > 0; --k) {
        const std::string ip =
            "10.200." + std::to_string(pod / 250) + "." + std::to_string(pod % 250 + 1);
        ++pod;
        const std::uint64_t id = in_use_ids_[rng_() % in_use_ids_.size()];
        add("cilium/state/ip/v1/default/" + ip, ip_pair_json(ip, n.host_ip, id, n.name), true,
            !node_is_gone(n), node_is_gone(n) ? "a stale IP key of a gone node" : "a live IP key");
      }
    }
  }

  std::vector<std::uint64_t>& labeler_ids(const WorldNode& n) {
    return n.name == world_.first.node ? world_.first.in_use : world_.second.in_use;
  }

  void make_other_keys() {
    // kvstoremesh's value of the cluster config: another writer's, never ours to touch.
    if (chance(4))
      add("cilium/cluster-config/default",
          R"({"id":)" + std::to_string(world_.cluster_id) +
              R"(,"capabilities":{"syncedCanaries":true,"cached":true,"maxConnectedClusters":)" +
              std::to_string(world_.max_connected_clusters) + "}}",
          true, true, "another writer's cluster config");
    if (chance(3))
      add("cilium/state/services/v1/default/default/web", R"({"cluster":"default"})", true, true,
          "a key no duty owns");
  }

  std::mt19937_64 rng_;
  World world_;
  std::vector<WorldNode> nodes_;
  std::set<std::uint64_t> used_ids_;       // every ID handed out, used or not
  std::vector<std::uint64_t> in_use_ids_;  // this cluster's IDs in use
  std::map<std::string, std::size_t> index_;
};

}  // namespace

std::size_t World::protected_count() const {
  return static_cast<std::size_t>(
      std::count_if(keys.begin(), keys.end(), [](const SeededKey& k) { return k.is_protected; }));
}

World generate_world(std::uint64_t seed) {
  return WorldBuilder(seed).build();
}

std::string seeded_text(std::string_view text, etcd::LeaseId agent_lease) {
  std::string out(text);
  const auto at = out.find(kLeaseHexPlaceholder);
  if (at == std::string::npos) return out;
  char hex[32];
  std::snprintf(hex, sizeof hex, "%llx", static_cast<unsigned long long>(agent_lease));
  out.replace(at, kLeaseHexPlaceholder.size(), hex);
  return out;
}

Status seed_world(etcd::EtcdApi& etcd, const World& world, etcd::LeaseId agent_lease) {
  etcd::TxnRequest wipe;
  wipe.success.push_back(etcd::TxnOp{
      etcd::TxnOp::Kind::delete_range, std::string(1, '\0'), std::string(1, '\0'), {}, 0});
  if (auto r = etcd.txn(wipe, world_deadline()); !r) return std::unexpected(r.error());
  for (std::size_t at = 0; at < world.keys.size(); at += kSeedOpsPerTxn) {
    etcd::TxnRequest txn;
    for (std::size_t i = at; i < std::min(world.keys.size(), at + kSeedOpsPerTxn); ++i) {
      const SeededKey& k = world.keys[i];
      txn.success.push_back(etcd::TxnOp{etcd::TxnOp::Kind::put,
                                        seeded_text(k.key, agent_lease),
                                        {},
                                        k.value,
                                        k.leased ? agent_lease : 0});
    }
    if (auto r = etcd.txn(txn, world_deadline()); !r) return std::unexpected(r.error());
  }
  return {};
}

Result<Verdict> check_world(etcd::EtcdApi& etcd, const World& world, etcd::LeaseId agent_lease) {
  etcd::RangeRequest all;
  all.key = std::string(1, '\0');
  all.range_end = std::string(1, '\0');
  auto page = etcd.range(all, world_deadline());
  if (!page) return std::unexpected(page.error());
  std::map<std::string, std::string, std::less<>> now;
  for (auto& kv : page->kvs) now.emplace(std::move(kv.key), std::move(kv.value));
  Verdict v;
  for (const SeededKey& k : world.keys) {
    const std::string key = seeded_text(k.key, agent_lease);
    auto it = now.find(key);
    if (!k.is_protected) {
      auto& kind = v.deletable_by_kind[k.what];
      ++v.deletable;
      ++kind.second;
      if (it == now.end()) {
        ++v.deletable_deleted;
        ++kind.first;
      }
      continue;
    }
    if (it == now.end()) {
      v.violations.push_back("deleted: " + key + " (" + k.what + ")");
    } else if (it->second != k.value) {
      v.violations.push_back("changed: " + key + " (" + k.what + ") from '" + k.value + "' to '" +
                             it->second + "'");
    }
  }
  return v;
}

}  // namespace cn::testing::property
