#pragma once
// The bridge from Nomad's model to the label contract: which facts of an allocation and its job
// feed derive_labels().
#include "common/labels/derive_labels.h"
#include "common/nomad/model/allocation.h"
#include "common/nomad/model/job.h"
#include "common/util/result.h"

namespace cn::nomad {

// Namespace, job ID and group from the allocation; ParentID, job meta and the meta of the
// allocation's group from the job. Fails if the job is not the allocation's (ID or namespace
// differ), which would label a workload with another job's meta. A group missing from the job
// (a job fetched at a newer version) contributes no meta.
[[nodiscard]] Result<labels::AllocationIdentity> identity_of(const Allocation& alloc,
                                                             const Job& job);

// Same with the embedded Job; fails when there is none (event payloads).
[[nodiscard]] Result<labels::AllocationIdentity> identity_of(const Allocation& alloc);

}  // namespace cn::nomad
