#pragma once
// Everything `cilium-nomad-labeler run` is told on its command line (see README, "Configuration").
#include <chrono>
#include <string>
#include <vector>

#include "common/labels/label_policy.h"
#include "labeler/labeling/label_step.h"
#include "labeler/policy/policy_settings.h"
#include "labeler/services/services_settings.h"

namespace cn::labeler {

enum class WatchMode { kNode, kEvents, kNone };

inline const char* to_string(WatchMode mode) {
  switch (mode) {
    case WatchMode::kNode:
      return "node";
    case WatchMode::kEvents:
      return "events";
    case WatchMode::kNone:
      return "none";
  }
  return "node";
}

struct DaemonConfig {
  std::string socket_path = "/run/cilium-nomad/labeler.sock";
  std::string state_file = "/run/cilium-nomad/state.json";
  std::string node_id;  // empty: discover it (labeler/daemon/node_identity.h)
  // Where an empty node_id is looked for: the Nomad client's data directory (empty: skip) and
  // this node's name in the node list (empty: skip).
  std::string nomad_data_dir = "/opt/nomad/data";
  std::string node_name;
  labels::LabelPolicy policy;
  policy::PolicySettings policies;  // off while policies.dir is empty
  ServicesSettings services;        // off unless services.enabled()
  int workers = 4;
  std::size_t max_queued = 4096;
  std::chrono::milliseconds call_timeout{5000};
  std::chrono::milliseconds item_budget{15000};
  std::chrono::milliseconds write_budget{30000};  // see LabelSettings::write_budget
  std::chrono::seconds resync_interval{300};      // 0: startup reconcile only
  WatchMode watch = WatchMode::kNode;
  bool cni_args_first = true;                   // see LabelSettings::cni_args_first
  std::string metrics_addr = "127.0.0.1:9810";  // empty: no metrics/health server
  // --unhealthy-after: how long Cilium or Nomad may stay unreachable before /healthz says so.
  std::chrono::seconds unhealthy_after{60};
  bool gc_endpoints = false;
  std::chrono::seconds gc_grace{600};
  std::vector<unsigned> allowed_uids = {0};
  LabelFaultHook label_fault_hook;  // tests only (see label_step.h)
};

}  // namespace cn::labeler
