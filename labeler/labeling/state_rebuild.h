#pragma once
// Building a state entry from what the labeler sees, in one place: a reconcile that finds a live
// endpoint the plugin never recorded (or whose file was lost) rebuilds the entry from it, and
// every labeling fills in Nomad's fields the plugin could not know (Nomad < 1.9.4 passes none).
#include "common/cilium/model/endpoint.h"
#include "common/labels/derive_labels.h"
#include "common/nomad/model/allocation.h"
#include "common/state/state_entry.h"
#include "common/util/clock.h"

namespace cn::labeler {

state::StateEntry rebuild_entry(const cilium::Endpoint& ep, const nomad::Allocation& alloc,
                                WallTime now);

// Sets namespace, job and group where the entry has none.
void fill_nomad_fields(state::StateEntry& entry, const labels::AllocationIdentity& identity);

}  // namespace cn::labeler
