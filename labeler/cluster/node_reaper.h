#pragma once
// Node reaping: the Cilium node entry `cilium/state/nodes/v1/<cluster>/<name>` of a node this
// Nomad region has listed and now reports `down`, or no longer lists, is deleted once that has
// lasted longer than a grace period, so other agents drop its routes and IPs without waiting for
// its lease (15 min) to expire.
//
// Only entries this cluster can prove are its own Nomad nodes are ever deleted. The etcd may be
// shared with Cilium nodes that never ran Nomad (gateways, bare-metal hosts, a Kubernetes
// cluster) or with another Nomad region, and those entries look the same. The proof is one of:
// Nomad's node list has the node as `down` (Nomad keeps listing a down node until its node GC
// threshold, 24 h by default), or a marker `cilium-nomad/<cluster>/nomad-nodes/<name>` exists,
// written by a leader of this region when Nomad listed the node. Markers live in etcd, without a
// lease, so a new leader knows what an old one saw. A node absent from the list with no marker of
// this region is never touched: counted as never listed, logged once per name.
//
// Never on doubt: an empty Nomad node list, one without the local node (this labeler runs on it,
// so a list without it is not the whole cluster), or a failed etcd read deletes nothing that
// pass. A node Nomad lists in any status but `down` (ready, initializing, disconnected, or one a
// newer Nomad adds) is never reaped. An entry or marker whose key or value is not the expected
// shape is skipped and counted, and proves nothing. At most `max_per_pass` entries are deleted a
// pass, oldest first; the rest wait for the next pass and are counted.
//
// The grace is measured on the injected clock from the first complete pass of THIS reaper that
// saw the node down or absent: Nomad's node list carries no time of the status change, and a new
// leader (a new reaper, or one that forget() reset) starts the grace again. That errs late,
// never early.
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include <spdlog/fwd.h>

#include "common/etcd/etcd_api.h"
#include "common/nomad/model/node.h"
#include "common/util/clock.h"
#include "common/util/result.h"
#include "labeler/cluster/duty_skeleton.h"
#include "labeler/cluster/fenced_txn.h"
#include "labeler/cluster/leader_fence.h"
#include "labeler/cluster/node_proof.h"
#include "labeler/cluster/paged_scan.h"

namespace cn::labeler::cluster {

// The durable memory that Nomad listed a node, one key per Cilium node name, owned by the
// labelers (outside Cilium's `cilium/` prefix, next to the leader key):
//   key:   cilium-nomad/<cluster>/nomad-nodes/<cilium node name>
//   value: {"id":"<Nomad node ID>","name":"<Nomad node name>","region":"<region>","at":"<RFC
//   3339>"}
// No lease. `region` is the region the leader's node list came from (NOMAD_REGION; empty: the
// local agent's own).
struct NomadNodeMarker {
  std::string id;
  std::string name;
  std::string region;
  std::string at;
};
std::string nomad_node_marker_prefix(std::string_view cluster);
std::string nomad_node_marker_key(std::string_view cluster, std::string_view node);
std::string nomad_node_marker_json(const NomadNodeMarker& marker);
// Strict: a JSON object with non-empty strings "id" and "name", and strings "region" and "at".
[[nodiscard]] Result<NomadNodeMarker> parse_nomad_node_marker(std::string_view value);

struct NodeReaperOptions {
  std::string cluster_name = "default";
  // This labeler's Nomad node name. A node list without it is doubted; empty: every pass doubts.
  std::string local_node;
  // The Nomad region the node list comes from, written into markers; a marker of another region
  // proves nothing.
  std::string region;
  NodeNameRule name_rule = NodeNameRule::name;
  std::chrono::nanoseconds grace = std::chrono::minutes{5};
  std::int64_t max_per_pass = 10;  // node entries deleted a pass, at least 1
  ScanSettings scan;
  bool dry_run = false;
};

struct NodeReapReport : DutyReport {
  // scanned: Cilium node entries read; over_cap: due, left for the next pass by max_per_pass
  std::int64_t nomad_nodes = 0;   // in the list given
  std::int64_t alive = 0;         // entries of nodes Nomad lists in a status not down
  std::int64_t down = 0;          // entries of nodes Nomad lists only as down
  std::int64_t absent = 0;        // entries of nodes Nomad listed before (a marker) and no longer
  std::int64_t never_listed = 0;  // entries of nodes this region never listed: never touched
  std::int64_t waiting = 0;       // down or absent, not yet for longer than the grace
  std::int64_t skipped_unknown_shape = 0;  // a key or value not of the expected shape
  std::int64_t markers_written = 0;        // nodes listed for the first time
  std::int64_t markers_removed = 0;        // of nodes neither listed nor with an entry
};

class NodeReaper {
 public:
  NodeReaper(etcd::EtcdApi& etcd, Clock& clock, NodeReaperOptions options,
             std::shared_ptr<spdlog::logger> log = nullptr);

  // `nomad_nodes`: the answer of a successful GET /v1/nodes (the runner does not call this when
  // that request failed).
  NodeReapReport run_pass(const std::vector<nomad::NodeStub>& nomad_nodes, const LeaderFence& fence,
                          std::stop_token stop);

  // Drops the grace clocks: the next pass starts every grace again.
  void forget() { gone_since_.clear(); }

 private:
  class Pass;  // one pass as a policy over the duty skeleton (node_reaper.cpp)
  struct Entry {
    std::string name;
    etcd::Revision mod_revision = 0;
  };

  std::vector<Entry> due_entries(const std::vector<Entry>& gone, NodeReapReport& report);
  void write_markers(const std::vector<NomadNodeMarker>& missing, const LeaderFence& fence,
                     NodeReapReport& report, const std::stop_token& stop);
  void remove_markers(const std::vector<Entry>& stale, const LeaderFence& fence,
                      NodeReapReport& report, const std::stop_token& stop);
  void log_never_listed(std::set<std::string, std::less<>> names);
  // Listed nodes without a marker of any region: the markers this pass writes.
  std::vector<NomadNodeMarker> unmarked(const NomadListing& nomad,
                                        const std::set<std::string, std::less<>>& marked) const;
  // True when the pass must end (fence lost, no answer); the report says how.
  static bool stop_on(const Result<FencedOutcome>& outcome, NodeReapReport& report);

  etcd::EtcdApi& etcd_;
  Clock& clock_;
  NodeReaperOptions options_;
  std::shared_ptr<spdlog::logger> log_;
  // Cilium node name -> when a complete pass first saw its node down or absent.
  std::map<std::string, MonoTime, std::less<>> gone_since_;
  // Names of never-listed entries already logged: one line per name while it stays so.
  std::set<std::string, std::less<>> never_listed_logged_;
};

}  // namespace cn::labeler::cluster
