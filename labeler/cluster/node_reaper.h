#pragma once
// Node reaping: the Cilium node entry `cilium/state/nodes/v1/<cluster>/<name>` of a node Nomad
// reports `down`, or no longer lists, is deleted once that has lasted longer than a grace period,
// so other agents drop its routes and IPs without waiting for its lease (15 min) to expire.
// Never on doubt: an empty Nomad node list, one without the local node (this labeler runs on it,
// so a list without it is not the whole cluster), or a failed etcd read deletes nothing that
// pass. A node Nomad lists in any status but `down` (ready, initializing, disconnected, or one a
// newer Nomad adds) is never reaped. An entry whose key or JSON is not the agent's shape is
// skipped and counted.
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
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include <spdlog/fwd.h>

#include "common/etcd/etcd_api.h"
#include "common/nomad/model/node.h"
#include "common/util/clock.h"
#include "labeler/cluster/duty_pass.h"
#include "labeler/cluster/leader_fence.h"
#include "labeler/cluster/paged_scan.h"

namespace cn::labeler::cluster {

// How a Nomad node's name maps to the Cilium node name (the agent's hostname as it registers).
enum class NodeNameRule {
  name,        // the Nomad node name as it is
  short_name,  // the Nomad node name up to its first '.' ("web-1.dc1.example" -> "web-1")
};
// "name" or "short-name"; nullopt for anything else.
std::optional<NodeNameRule> parse_node_name_rule(std::string_view text);
std::string cilium_node_name(std::string_view nomad_name, NodeNameRule rule);

struct NodeReaperOptions {
  std::string cluster_name = "default";
  // This labeler's Nomad node name. A node list without it is doubted; empty: every pass doubts.
  std::string local_node;
  NodeNameRule name_rule = NodeNameRule::name;
  std::chrono::nanoseconds grace = std::chrono::minutes{5};
  ScanSettings scan;
  bool dry_run = false;
};

struct NodeReapReport {
  PassEnd end = PassEnd::complete;
  std::string detail;
  etcd::Revision revision = 0;
  std::int64_t nomad_nodes = 0;  // in the list given
  std::int64_t scanned = 0;      // Cilium node entries read
  std::int64_t alive = 0;        // entries of nodes Nomad lists in a status not down
  std::int64_t down = 0;         // entries of nodes Nomad lists only as down
  std::int64_t absent = 0;       // entries of nodes Nomad does not list
  std::int64_t waiting = 0;      // down or absent, not yet for longer than the grace
  std::int64_t deleted = 0;
  std::int64_t would_delete = 0;           // dry run
  std::int64_t skipped_unknown_shape = 0;  // a key or value not of the agent's shape
  std::int64_t refused = 0;                // delete txns etcd refused (a compare failed)
  std::int64_t pages = 0;
  std::int64_t etcd_requests = 0;
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
  struct Entry {
    std::string name;
    etcd::Revision mod_revision = 0;
  };

  std::vector<Entry> due_entries(const std::vector<Entry>& gone, NodeReapReport& report);
  void delete_entries(const std::vector<Entry>& due, const LeaderFence& fence,
                      NodeReapReport& report, const std::stop_token& stop);

  etcd::EtcdApi& etcd_;
  Clock& clock_;
  NodeReaperOptions options_;
  std::shared_ptr<spdlog::logger> log_;
  // Cilium node name -> when a complete pass first saw its node down or absent.
  std::map<std::string, MonoTime, std::less<>> gone_since_;
};

}  // namespace cn::labeler::cluster
