#pragma once
// When the workload fields Nomad >= 1.9.4 puts into CNI_ARGS are the whole answer, so that an
// allocation can be labeled at ADD without waiting for Nomad (issue 13: "CNI_ARGS first").
#include <optional>
#include <string_view>

#include "common/cni/cni_args.h"
#include "common/labels/derive_labels.h"
#include "common/labels/label_policy.h"

namespace cn::labeler {

// The identity CNI_ARGS gives, or nullopt when Nomad's answer is needed:
//  - meta labels are configured: CNI_ARGS carry no meta, and labeling without it would cost a
//    second identity change once Nomad answers;
//  - a field is missing, or NOMAD_ALLOC_ID is not this allocation (the arguments are not the ones
//    Nomad >= 1.9.4 builds for it);
//  - the job ID has the form of a periodic or dispatched child (`<parent>/periodic-<n>`): only
//    Job.ParentID says whether it is one, and a job named like another job's child must not
//    wear that job's labels, not even until Nomad answers.
std::optional<labels::AllocationIdentity> identity_from_cni_args(const cni::NomadWorkload& args,
                                                                 std::string_view alloc_id,
                                                                 const labels::LabelPolicy& policy);

}  // namespace cn::labeler
