#pragma once
// What `run` is told about policy distribution (README, "Policies").
#include <chrono>
#include <cstddef>
#include <string>

#include "common/cilium/model/agent_options.h"
#include "common/util/backoff.h"

namespace cn::labeler::policy {

struct PolicySettings {
  std::string dir;  // --policy-dir; the distributor is off without it
  std::string nomad_namespace = "default";
  std::string prefix = "cilium/policies";
  std::size_t max_policies = 512;  // --policy-max-count: files of ours in the directory
  std::string status_file;         // empty: none
  // The audit-mode claims (policy_audit.h); empty: kept in memory only, lost at a restart.
  std::string audit_file;
  std::chrono::seconds wait{300};  // blocking wait sent to Nomad
  std::chrono::milliseconds call_timeout{10'000};
  std::chrono::seconds resync_interval{300};  // 0: only at start
  // An unchanged answer that came back sooner than this is followed by a pause, so a server that
  // ignores ?index= cannot make the loop spin.
  std::chrono::milliseconds min_quiet_interval{1'000};
  BackoffPolicy backoff;
  // --agent-option NAME=true|false: wins over what the agent reports (nullopt: not given).
  cilium::ReportedAgentOptions agent_option_overrides{};
};

}  // namespace cn::labeler::policy
