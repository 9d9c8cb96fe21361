// GC (CNI 1.1): drop entries for attachments the runtime no longer holds. Nomad never sends it;
// other runtimes may. The key is `cni.dev/valid-attachments` in libcni and the corrected spec,
// `cni.dev/attachments` in the tagged 1.1.0 text: accept both.
#include <set>

#include "cni-plugin/verb_context.h"

namespace cn::plugin {

Outcome verb_gc(VerbContext& ctx) {
  std::set<std::pair<std::string, std::string>> valid;
  for (const char* key : {"cni.dev/valid-attachments", "cni.dev/attachments"}) {
    auto it = ctx.conf.raw.find(key);
    if (it == ctx.conf.raw.end() || it->is_null()) continue;
    if (!it->is_array()) {
      return error_outcome({cni::ErrorCode::kInvalidNetworkConfig, std::string("invalid ") + key,
                            "must be an array of {containerID, ifname}"},
                           ctx.conf.cni_version, ctx.log);
    }
    for (const auto& a : *it) {
      if (!a.is_object()) continue;
      auto cid = a.find("containerID");
      auto ifn = a.find("ifname");
      if (cid == a.end() || ifn == a.end() || !cid->is_string() || !ifn->is_string()) continue;
      valid.emplace(cid->get<std::string>(), ifn->get<std::string>());
    }
  }
  ctx.enter(Step::kStateWrite);
  auto store = ctx.state_store();
  std::size_t removed = 0;
  const long long now_ms = unix_millis(ctx.clock.wall_now());
  auto ok = store.update([&](state::StateDoc& doc) {
    // Tombstoned like a DEL: the runtime says these attachments are gone.
    std::erase_if(doc.allocations, [&](const auto& kv) {
      bool stale = !valid.contains({kv.first, kv.second.ifname});
      if (stale) doc.deleted.insert_or_assign(kv.first, now_ms);
      removed += stale ? 1 : 0;
      return stale;
    });
    return removed > 0;
  });
  ctx.enter(Step::kStateWritten);
  if (!ok) {
    ctx.log.get().warn("gc: state update failed: error=\"{}\"", ok.error().message);
  } else {
    ctx.log.get().info("gc valid={} removed={}", valid.size(), removed);
  }
  ctx.enter(Step::kOutput);
  return {};
}

}  // namespace cn::plugin
