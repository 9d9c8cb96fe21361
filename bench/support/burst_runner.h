#pragma once
// One burst of allocations on a LabelerStack, timed per allocation. Each allocation goes the way
// it does on a node: cilium-cni creates the endpoint (reserved:init), then, in our design, the
// plugin runs and waits for the labels; then the Nomad client reports the allocation's network,
// which the servers publish after the client->server sync delay. In the event-stream design
// there is no plugin: that report is the labeler's only trigger.
#include <string>
#include <vector>

#include "bench/support/labeler_stack.h"

namespace cn::bench {

enum class Design {
  kPlugin,            // ours: the plugin notifies, the node watch races the CNI chain
  kPluginWatchFirst,  // ours, the allocation already seen by the node watch (the usual order)
  kPluginNomadGet,    // the old path: every notification asks Nomad (--watch none,
                      // --cni-args-first=false)
  kEventStream,       // no plugin, `--watch events`
};

// The labeler's flags for a design.
StackOptions stack_options(Design design);
bool runs_plugin(Design design);

struct AllocSample {
  std::string alloc_id;
  double init_ms = 0;  // endpoint created -> final identity applied (time under reserved:init)
  double plugin_ms =
      0;  // plugin ADD exec -> exit: how long the workload's start waited (0: no plugin)
  double exposed_ms = 0;        // workload running while still under reserved:init
  bool plugin_labeled = false;  // the plugin heard "labeled" before returning
  // Our design only, from the plugin's exec (ms): when the fakes saw each step of the labeling.
  double nomad_answered_ms = 0;  // GET /v1/allocation/:id answered
  double endpoint_get_ms = 0;    // GET /v1/endpoint/cni-attachment-id:... received
  double patch_ms = 0;           // PATCH /v1/endpoint/{id} received
  double identity_ms = 0;        // final identity applied
};

struct BurstResult {
  std::vector<AllocSample> samples;
  bool complete = false;  // every endpoint reached its final identity before the deadline
  std::string error;
};

BurstResult run_burst(LabelerStack& stack, Design design, int allocs,
                      std::chrono::milliseconds deadline);

}  // namespace cn::bench
