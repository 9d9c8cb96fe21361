// An allocation failure, a JSON accessor or a system call wrapper that throws must not fail the
// allocation's networking any more than a broken state file or a missing labeler does.
#include "cni-plugin/fail_open.h"

namespace cn::plugin {
namespace {

std::string_view consequence(const VerbContext& ctx, std::string_view command) {
  if (command == "ADD") {
    return ctx.conf.prev_result ? "passing prevResult on (fail-open)"
                                : "reporting the missing prevResult";
  }
  if (exits_zero_on_our_trouble(command)) return "exiting 0 (fail-open)";
  return "reporting an internal error";
}

}  // namespace

bool exits_zero_on_our_trouble(std::string_view command) {
  return command == "DEL" || command == "CHECK" || command == "GC" || command == "STATUS";
}

Outcome fail_open(VerbContext& ctx, std::string_view command, std::string_view cause) {
  ctx.log.get().error("{} threw, {}: step={} alloc={} error=\"{}\"", verb_log_name(command),
                      consequence(ctx, command), step_name(ctx.step),
                      ctx.container_id.empty() ? "-" : ctx.container_id, cause);
  if (command == "ADD") return add_output(ctx);
  if (exits_zero_on_our_trouble(command)) return {};
  return error_outcome(
      cni::CniError{cni::ErrorCode::kTryAgainLater, "internal error", std::string(cause)},
      ctx.conf.cni_version, ctx.log);
}

}  // namespace cn::plugin
