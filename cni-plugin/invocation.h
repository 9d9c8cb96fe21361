#pragma once
// A CNI call as data: what the runtime gave us (environment, stdin) and what we give back.
// main() is the only place that touches the real process environment and file descriptors.
#include <map>
#include <optional>
#include <string>

#include "cni-plugin/step.h"
#include "common/util/clock.h"

namespace cn::plugin {

struct Invocation {
  std::map<std::string, std::string> env;
  std::string stdin_data;

  std::optional<std::string> get(const std::string& key) const;
};

struct Outcome {
  int exit_code = 0;
  std::string stdout_data;  // CNI JSON only
  std::string stderr_data;  // log lines when no log-file is configured
};

struct PluginContext {
  Clock& clock;
  FaultHook fault_hook = nullptr;
};

// Never lets an exception out once the config is parsed: the verb fails open instead (ADD passes
// prevResult on, the other verbs exit 0). Exceptions before that reach plugin_main's last resort.
Outcome run_cni(const Invocation& invocation, PluginContext& ctx);

}  // namespace cn::plugin
