#pragma once
// One run of the real cilium-nomad-cni binary, exec'd the way Nomad's CNI library does:
// explicit environment (CNI_ARGS with the NOMAD_* fields of Nomad >= 1.9.4), the netconf with
// cilium-cni's prevResult on stdin.
#include <chrono>
#include <string>

#include "common/util/clock.h"

namespace cn::bench {

struct PluginTarget {
  std::string binary;  // path of cilium-nomad-cni (or the floor)
  std::string state_file;
  std::string labeler_socket;
  int wait_for_labels_ms = 3000;
};

struct PluginRun {
  int exit_code = -1;
  double ms = 0;       // exec to exit
  WallTime started{};  // system clock, comparable with the fake agent's timestamps
  WallTime ended{};
  MonoTime started_mono{};  // steady clock, comparable with the fakes' request logs
  std::string err;          // the plugin's log line (labeler=labeled|timeout|unreachable ...)
};

// The netconf (stdin) for an allocation whose endpoint holds `ipv4`.
std::string plugin_netconf(const PluginTarget& target, const std::string& ipv4);
PluginRun run_plugin(const PluginTarget& target, const std::string& verb,
                     const std::string& alloc_id, const std::string& netconf);

}  // namespace cn::bench
