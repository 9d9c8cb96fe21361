#include "labeler/labeling/state_rebuild.h"

#include "common/cni/ifname.h"

namespace cn::labeler {

state::StateEntry rebuild_entry(const cilium::Endpoint& ep, const nomad::Allocation& alloc,
                                WallTime now) {
  state::StateEntry e;
  e.ifname = cni::kDefaultIfname;
  if (auto owner = cilium::attachment_of(ep); owner && !owner->ifname.empty())
    e.ifname = owner->ifname;
  for (const auto& a : ep.addressing) {
    if (!a.ipv4.empty()) e.ips.push_back(a.ipv4);
    if (!a.ipv6.empty()) e.ips.push_back(a.ipv6);
  }
  e.nomad = {"", alloc.nomad_namespace, alloc.job_id, alloc.task_group};
  e.added_at = rfc3339(now);
  e.added_unix_ms = unix_millis(now);
  return e;
}

void fill_nomad_fields(state::StateEntry& entry, const labels::AllocationIdentity& identity) {
  if (entry.nomad.namespace_.empty()) entry.nomad.namespace_ = identity.nomad_namespace;
  if (entry.nomad.job_id.empty()) entry.nomad.job_id = identity.job_id;
  if (entry.nomad.group.empty()) entry.nomad.group = identity.task_group;
}

}  // namespace cn::labeler
