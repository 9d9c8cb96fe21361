// DEL runs before cilium-cni's DEL (the chain is deleted in reverse), and the first error stops
// the chain: so DEL always exits 0 once the input is well-formed, whatever else fails.
#include "cni-plugin/verb_context.h"
#include "common/notify/notify_client.h"

namespace cn::plugin {

Outcome verb_del(VerbContext& ctx) {
  ctx.enter(Step::kStateWrite);
  auto store = ctx.state_store();
  bool removed = false;
  // A tombstone, not a plain removal: labeling already in flight must not bring the entry back.
  auto ok = store.remove_entry(ctx.container_id, removed);
  ctx.enter(Step::kStateWritten);
  std::string state_result = ok ? (removed ? "removed" : "absent") : "failed";
  if (!ok) {
    ctx.log.get().warn(
        "del: state update failed (the labeler's GC drops the entry later): "
        "alloc={} error=\"{}\"",
        ctx.container_id, ok.error().message);
  }

  ctx.enter(Step::kLabelerNotify);
  notify::Request req;
  req.op = notify::Op::kDel;
  req.alloc_id = ctx.container_id;
  req.ifname = ctx.ifname;
  req.netns = ctx.netns;
  auto sent = notify::send_request(ctx.conf.labeler_socket, req, ctx.clock,
                                   ctx.started + std::chrono::milliseconds{200});
  ctx.enter(Step::kLabelerNotified);
  ctx.log.get().info("del alloc={} ifname={} state={} labeler={}", ctx.container_id, ctx.ifname,
                     state_result, sent ? "sent" : "unreachable");
  ctx.enter(Step::kOutput);
  return {};
}

}  // namespace cn::plugin
