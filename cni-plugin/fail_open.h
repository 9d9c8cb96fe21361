#pragma once
// What the plugin does when something throws: the verbs already fail open on every error they
// expect, and this keeps the same promise for what nobody expects.
#include <string_view>

#include "cni-plugin/verb_context.h"

namespace cn::plugin {

// DEL must never stop the chain; CHECK failing would make Nomad tear the network down; GC and
// STATUS are housekeeping and readiness, and ADD depends on neither.
bool exits_zero_on_our_trouble(std::string_view command);

// What a verb returns when it threw: ADD passes prevResult on, DEL/CHECK/GC/STATUS exit 0.
Outcome fail_open(VerbContext& ctx, std::string_view command, std::string_view cause);

}  // namespace cn::plugin
