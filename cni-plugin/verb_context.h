#pragma once
// What every verb gets once the dispatcher has parsed stdin and the environment.
#include <string>

#include "cni-plugin/invocation.h"
#include "cni-plugin/plugin_logger.h"
#include "common/cni/cni_error.h"
#include "common/cni/plugin_conf.h"
#include "common/state/state_store.h"

namespace cn::plugin {

struct VerbContext {
  const Invocation& invocation;
  const cni::PluginConf& conf;
  PluginLogger& log;
  Clock& clock;
  MonoTime started;
  std::string container_id;  // validated alloc ID (empty for GC/STATUS)
  std::string ifname;
  std::string netns;
  const FaultHook& fault_hook;
  Step step = Step::kConfigParsed;  // the last step entered, for the fail-open log line

  void enter(Step next);
  state::StateStore state_store() const;
};

Outcome error_outcome(const cni::CniError& error, const std::string& cni_version,
                      PluginLogger& log);

// ADD's output: prevResult stamped with the config's cniVersion, or the error for a missing one.
Outcome add_output(VerbContext& ctx);

Outcome verb_add(VerbContext& ctx);
Outcome verb_check(VerbContext& ctx);
Outcome verb_del(VerbContext& ctx);
Outcome verb_gc(VerbContext& ctx);

}  // namespace cn::plugin
