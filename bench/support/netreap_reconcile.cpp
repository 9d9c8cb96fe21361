#include "bench/support/netreap_reconcile.h"

#include "common/cilium/model/label_write_plan.h"
#include "common/labels/derive_labels.h"
#include "common/nomad/model/alloc_identity.h"

namespace cn::bench {

Result<NetreapReport> netreap_reconcile(nomad::NomadApi& nomad, cilium::CiliumApi& cilium,
                                        const labels::LabelPolicy& policy, MonoTime deadline) {
  auto endpoints = cilium.endpoints(deadline);
  if (!endpoints) return std::unexpected(endpoints.error());
  NetreapReport report;
  for (const auto& ep : endpoints->endpoints) {
    if (cilium::is_reserved_only(ep)) continue;
    auto owner = cilium::attachment_of(ep);
    if (!owner) continue;  // netreap skips endpoints without a container ID
    ++report.endpoints;
    // The per-endpoint Nomad call that our reconciler replaces with one node-allocations call.
    auto alloc = nomad.allocation(owner->alloc_id, deadline);
    if (!alloc) {
      ++report.nomad_errors;
      continue;
    }
    auto identity = nomad::identity_of(*alloc);
    if (!identity) continue;
    auto plan = cilium::plan_label_write(ep, labels::derive_labels(*identity, policy));
    if (plan.action == cilium::LabelWriteAction::none)
      ++report.correct;
    else
      ++report.to_write;
  }
  return report;
}

}  // namespace cn::bench
