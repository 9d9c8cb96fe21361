#pragma once
// The one decision on whether what a worker was told about a workload may label an allocation's
// endpoint. Every path asks it: a notification (CNI_ARGS, then Nomad), the watch and its cache,
// the reconcile, explain. docs/threat-model.md lists who can forge which claim and the tests.
#include <string_view>
#include <variant>

#include "common/cni/cni_args.h"
#include "common/labels/derive_labels.h"
#include "common/nomad/model/allocation.h"
#include "common/util/result.h"

namespace cn::labeler {

// An allocation that Nomad's API returned (a GET, a node listing, the event stream).
struct NomadClaim {
  const nomad::Allocation& alloc;
};

// Why CNI_ARGS are being considered.
enum class CniArgsUse {
  before_nomad,       // to label at ADD without waiting for Nomad; Nomad checks it afterwards
  nomad_unavailable,  // Nomad answered with an error; Nomad checks it once it answers again
};

// The NOMAD_* fields the plugin read from CNI_ARGS.
struct CniArgsClaim {
  const cni::NomadWorkload& args;
  CniArgsUse use;
};

using IdentityClaim = std::variant<NomadClaim, CniArgsClaim>;

struct TrustRules {
  // --cni-args-first: false means CNI_ARGS are never read, not even with Nomad down.
  bool cni_args_allowed = true;
  // --meta-labels is set: CNI_ARGS carry no meta, so labeling from them before Nomad answers
  // would change the identity a second time when Nomad's meta arrives.
  bool meta_labels = false;
};

// The identity `claim` gives allocation `alloc_id`, or why it must not be used (kind `invalid`:
// this claim can never label it; `bad_answer`: Nomad's answer cannot be used now, a later one
// may). Nomad's answer is trusted when it is about `alloc_id` and its job is the allocation's.
// CNI_ARGS are trusted only when the operator allows them, NOMAD_ALLOC_ID is `alloc_id` (so
// Nomad >= 1.9.4 built them for this allocation), and the job ID does not have the form of a
// periodic or dispatched child: a job may be named `admin/periodic-1700000000`, and only Nomad's
// Job.ParentID says whether a job is a child, never its name. The fields are used as given.
[[nodiscard]] Result<labels::AllocationIdentity> trusted_identity(const IdentityClaim& claim,
                                                                  std::string_view alloc_id,
                                                                  const TrustRules& rules);

}  // namespace cn::labeler
