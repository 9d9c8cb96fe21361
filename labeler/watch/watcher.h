#pragma once
// What the two Nomad watch modes (--watch node|events) share: the interface the daemon runs on a
// thread, the callbacks into the daemon, the reconnect backoff and the rule that turns an
// allocation into label work. The watchers only find allocations that need labels; the work
// queue and the workers do the labeling, so a slow Cilium agent never stalls the Nomad reader.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <stop_token>
#include <string>
#include <string_view>

#include <spdlog/fwd.h>

#include "common/nomad/client/nomad_api.h"
#include "common/nomad/model/allocation.h"
#include "common/util/backoff.h"
#include "common/util/clock.h"
#include "common/util/retry_rule.h"
#include "labeler/daemon/work_item.h"

namespace cn::labeler {

// Hands work to the queue; false when the queue refused it (full): the next resync catches up.
using EnqueueFn = std::function<bool(WorkItem)>;
// A full reconcile of the node, requested when the watch may have missed changes (index reset,
// event stream reconnect). Runs on the watcher's thread.
using ResyncFn = std::function<void()>;

class CallRecorder;
class Metrics;

// What the daemon hands either watcher: the Nomad it watches for this node, time, where calls and
// counts are reported, and where found work and resync requests go.
struct WatcherDeps {
  nomad::NomadApi& nomad;
  Clock& clock;
  Metrics& metrics;
  CallRecorder& calls;
  std::string node_id;
  EnqueueFn enqueue;
  ResyncFn resync;
  std::shared_ptr<spdlog::logger> log;  // null: spdlog's default logger
};

class Watcher {
 public:
  virtual ~Watcher() = default;
  // Loops until `stop`; returns promptly once stop is requested, except that a call already in
  // flight finishes first (its deadline bounds it).
  virtual void run(std::stop_token stop) = 0;
  virtual std::string_view mode() const = 0;
};

// " fix=\"...\"" for a log line when an operator must act before retrying can help (TLS, ACL).
inline std::string remedy_note(const Error& error) {
  auto fix = remedy(error, Peer::nomad);
  return fix.empty() ? std::string() : " fix=\"" + std::string(fix) + "\"";
}

// Whether an allocation's endpoint should carry labels now: it has an address (the client
// reported NetworkStatus after CNI ADD; host-network allocs report empty strings) and Nomad
// does not consider it finished.
inline bool wants_labels(const nomad::Allocation& alloc) {
  return !alloc.address().empty() && !alloc.is_terminal();
}

// Label work for an allocation seen by a watcher. `with_alloc` attaches the allocation, which is
// only useful when it embeds its Job (node allocations do, event payloads do not): the worker
// then needs no Nomad call.
inline WorkItem watch_work_item(const nomad::Allocation& alloc, bool with_alloc) {
  WorkItem item;
  item.alloc_id = alloc.id;
  if (alloc.network_status) {
    const auto& ns = *alloc.network_status;
    if (!ns.interface_name.empty()) item.ifname = ns.interface_name;
    if (!ns.address.empty()) item.ips.push_back(ns.address);
    // IPv6-only allocs on Nomad >= 1.11 repeat the IPv6 address in Address.
    if (!ns.address_ipv6.empty() && ns.address_ipv6 != ns.address)
      item.ips.push_back(ns.address_ipv6);
  }
  if (with_alloc) item.alloc = alloc;
  item.source = WorkSource::kWatch;
  item.confirm = false;  // nobody waits on watch work; the plugin's own notification confirms
  return item;
}

}  // namespace cn::labeler
