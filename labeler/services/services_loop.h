#pragma once
// Runs the services feature on one node (docs/services.md, "The daemon loop"): ServicesSync's
// passes, woken by what changed instead of polled.
//
//  - Registrations: a full listing at start, at every resync and after the event stream was
//    reopened (events may have fallen out of Nomad's buffer, and registrations removed by an
//    allocation's garbage collection publish none); between listings the Service event topic.
//  - Reports and the VIP table: a blocking query on their common prefix; a pass runs when the
//    listing under the prefix changed (the query also wakes on unrelated variables' writes).
//  - This node's checks: read from the local client every check interval; the report is written
//    only when it changed, and a pass follows at once.
//
// Passes are coalesced: whatever wakes the loop while a pass runs costs one more pass. A failed
// pass leaves the agent with what it had (never an empty set) and is retried with backoff.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <stop_token>
#include <string>

#include <spdlog/fwd.h>

#include "common/nomad/client/nomad_api.h"
#include "common/util/backoff.h"
#include "common/util/clock.h"
#include "common/util/wakeup.h"
#include "labeler/serve/call_recorder.h"
#include "labeler/services/services_metrics.h"
#include "labeler/services/services_sync.h"

namespace cn::labeler {

struct ServicesLoopOptions {
  std::chrono::milliseconds call_timeout{5'000};
  // How often this node's instances' checks are read from its own client (no server load).
  std::chrono::milliseconds check_interval{5'000};
  // A full listing of the registrations, for what the event topic never tells.
  std::chrono::seconds resync_interval{300};
  // Of the blocking query on the reports and the VIP table (Nomad caps it at 300 s).
  std::chrono::seconds watch_wait{300};
  // The event stream sends a heartbeat every 10 s; no byte for this long is a dead stream.
  std::chrono::milliseconds stream_idle_timeout{45'000};
  std::string variables_namespace = "default";
  std::string variables_prefix = "cilium-nomad/services/";  // reports and VIP table
  BackoffPolicy backoff{std::chrono::milliseconds{500}, std::chrono::seconds{30},
                        std::chrono::milliseconds{100}};
  std::uint64_t seed = 0;  // of the backoff's jitter; 0: random
};

struct ServicesLoopDeps {
  nomad::NomadApi& nomad;  // the event stream and the variables watch
  ServicesSync& sync;
  Clock& clock;
  ServicesMetrics& metrics;
  CallRecorder& calls;
  std::shared_ptr<spdlog::logger> log;
};

class ServicesLoop {
 public:
  ServicesLoop(ServicesLoopDeps deps, ServicesLoopOptions options);

  // Until stop: the pass loop on this thread, the event stream and the watch on two more.
  void run(std::stop_token stop);
  // Asks for a pass now (tests, and the daemon when the agent restarted).
  void kick() { wake_.kick(); }
  // Called after every pass, with its outcome (the status file, `services`). Set before run().
  void set_on_pass(std::function<void(const Result<ServicesPass>&)> on_pass) {
    on_pass_ = std::move(on_pass);
  }
  // Passes that succeeded so far.
  std::uint64_t passes() const { return passes_.load(); }

 private:
  void pass_loop(std::stop_token stop);
  void event_loop(std::stop_token stop);
  void watch_loop(std::stop_token stop);
  void publish(const ServicesPass& pass);
  Deadline call_deadline(std::stop_token stop) const;

  ServicesLoopDeps deps_;
  ServicesLoopOptions options_;
  BackoffJitter jitter_;
  Wakeup wake_;          // a pass is due
  Wakeup first_listed_;  // the first pass listed every registration: the stream may start
  std::atomic<bool> relist_due_{true};
  std::atomic<std::uint64_t> passes_{0};
  std::function<void(const Result<ServicesPass>&)> on_pass_;
  std::vector<LbProblem> last_variable_problems_;  // logged when they change, not every pass
};

}  // namespace cn::labeler
