#pragma once
// IP GC: the agents' ipcache entries `cilium/state/ip/v1/default/<ip>` (value: the JSON of
// identity.IPIdentityPair, ip_key.h) that no endpoint holds any more.
//
// Every Cilium release writes these keys on the agent's session lease (pkg/ipcache/kvstore.go,
// UpdateIfDifferent(..., lease=true)), deletes its own when an endpoint goes and re-creates one
// it still holds when someone else deletes it. A leased key therefore goes with its agent and
// is never touched here. What nobody removes is a key WITHOUT a lease: written by hand, by a
// tool, or copied by a migration that does not carry leases (etcdctl make-mirror). etcd removes
// a key with its lease, so no key outlives its lease: "lease-orphaned" keys do not exist.
//
// A lease-less key is deleted only if all of these hold:
//   - its value parses, names the key's IP and a HostIP;
//   - the HostIP's node is proven this cluster's and gone, or alive and not holding the IP:
//       * gone: a node entry `cilium/state/nodes/v1/<cluster>/<name>` has the HostIP and node
//         reaping's proof says the node is this Nomad region's and down or no longer listed
//         (node_proof.h); or the previous complete pass proved that HostIP gone and no entry
//         holds it now (node reaping deletes a gone node's entry);
//       * alive: that node's in-use report (in_use_report.h) is readable, carries the endpoint
//         IPs (an older labeler's report without them proves nothing) and lacks this IP;
//   - the same on two complete passes, with an unchanged ModRevision (compared in the delete
//     txn, under the leader fence);
//   - within the per-pass cap and the deletion rate limit.
// A node this region never listed, a HostIP no entry holds, a node without a report: kept.
// Keys under another address space than `default` (never written by an agent) are not read.
//
// One thread (the cluster duties' runner) calls run_pass; the object keeps the memory between
// passes.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stop_token>
#include <string>
#include <unordered_map>
#include <vector>

#include <spdlog/fwd.h>

#include "common/etcd/etcd_api.h"
#include "common/nomad/model/node.h"
#include "common/util/clock.h"
#include "labeler/cluster/delete_rate_limiter.h"
#include "labeler/cluster/duty_skeleton.h"
#include "labeler/cluster/leader_fence.h"
#include "labeler/cluster/node_proof.h"
#include "labeler/cluster/paged_scan.h"

namespace cn::labeler::cluster {

struct IpGcOptions {
  std::string cluster_name = "default";  // node entries, markers and reports of this cluster
  std::string local_node;                // this labeler's Nomad node name (doubt without it)
  std::string region;                    // the region whose markers prove a node ours
  NodeNameRule name_rule = NodeNameRule::name;
  ScanSettings scan;
  int deletions_per_minute = 2500;   // 0: no limit
  std::int64_t max_per_pass = 1000;  // confirmed deletions a pass; the rest wait for the next
  std::size_t deletions_per_txn = 50;
  bool dry_run = false;
};

struct IpGcReport : DutyReport {
  // scanned: IP keys read; over_cap: confirmed, left for the next pass by max_per_pass
  std::int64_t leased = 0;         // on a lease (an agent's): never touched
  std::int64_t unknown_shape = 0;  // lease-less, but key or value not the agents' shape
  std::int64_t no_owner = 0;       // lease-less, HostIP in no node entry, not proven gone
  std::int64_t not_ours = 0;       // HostIP's node never listed by this region
  std::int64_t no_report = 0;      // owner alive; no report, unreadable, or without IPs
  std::int64_t in_use = 0;         // owner alive and its report lists the IP
  std::int64_t node_gone = 0;      // candidates: owner proven gone
  std::int64_t endpoint_gone = 0;  // candidates: owner alive, IP not in its report
  std::int64_t candidates = 0;     // node_gone + endpoint_gone: remembered for the next pass
  std::int64_t confirmed = 0;      // candidates the previous pass remembered, same ModRevision
  std::int64_t reports = 0;        // in-use reports read
  std::int64_t reports_without_ips = 0;  // older labelers' reports: no proof for their nodes
};

class IpGc {
 public:
  IpGc(etcd::EtcdApi& etcd, Clock& clock, IpGcOptions options,
       std::shared_ptr<spdlog::logger> log = nullptr);

  // `nomad_nodes`: the answer of a successful GET /v1/nodes.
  IpGcReport run_pass(const std::vector<nomad::NodeStub>& nomad_nodes, const LeaderFence& fence,
                      std::stop_token stop);

  // Drops the two-pass memory and the HostIPs proven gone.
  void forget() {
    remembered_.clear();
    gone_hosts_.clear();
  }
  std::size_t remembered() const { return remembered_.size(); }

 private:
  class Pass;  // one pass as a policy over the duty skeleton (ip_gc.cpp)

  etcd::EtcdApi& etcd_;
  Clock& clock_;
  IpGcOptions options_;
  std::shared_ptr<spdlog::logger> log_;
  DeleteRateLimiter limiter_;
  // IP key -> its ModRevision when the last complete pass found it a candidate.
  std::unordered_map<std::string, etcd::Revision> remembered_;
  // HostIP -> the Cilium node name the last complete pass proved gone.
  std::unordered_map<std::string, std::string> gone_hosts_;
};

}  // namespace cn::labeler::cluster
