// The verbs already fail open on every error they expect (state file, labeler, timeouts). This is
// the same promise for what nobody expects: an allocation failure, a JSON accessor or a system
// call wrapper that throws must not fail the allocation's networking either.
#include <cctype>

#include "cni-plugin/verb_context.h"

namespace cn::plugin {
namespace {

bool exits_zero_on_our_trouble(std::string_view command) {
  // DEL must never stop the chain; CHECK failing would make Nomad tear the network down; GC and
  // STATUS are housekeeping and readiness, and ADD does not depend on either.
  return command == "DEL" || command == "CHECK" || command == "GC" || command == "STATUS";
}

std::string lowercase(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

Outcome fail_open(VerbContext& ctx, std::string_view command, std::string_view cause) {
  const bool is_add = command == "ADD";
  const bool passes = is_add || exits_zero_on_our_trouble(command);
  ctx.log.get().error("{} threw, {}: step={} alloc={} error=\"{}\"", lowercase(command),
                      is_add ? "passing prevResult on (fail-open)"
                             : (passes ? "exiting 0 (fail-open)" : "reporting an internal error"),
                      step_name(ctx.step), ctx.container_id.empty() ? "-" : ctx.container_id, cause);
  if (is_add) return add_output(ctx);
  if (passes) return {};
  return error_outcome(cni::CniError{cni::ErrorCode::kTryAgainLater, "internal error", std::string(cause)},
                       ctx.conf.cni_version, ctx.log);
}

}  // namespace cn::plugin
