#include "labeler/labeling/identity_trust.h"

#include "common/labels/parent_job.h"
#include "common/nomad/model/alloc_identity.h"

namespace cn::labeler {
namespace {

Result<labels::AllocationIdentity> from_nomad(const nomad::Allocation& alloc,
                                              std::string_view alloc_id) {
  if (alloc.id != alloc_id) {
    // A confused proxy or cache answered about another allocation.
    return fail(ErrorKind::bad_answer, "Nomad answered for allocation " + alloc.id +
                                           " when asked for " + std::string(alloc_id));
  }
  auto identity = nomad::identity_of(alloc);
  if (!identity) {
    // "Job": null or a job that does not match: incomplete now (a purged job, a proxy trimming
    // bodies); it may be whole on the next read.
    return fail(ErrorKind::bad_answer, "cannot derive labels: " + identity.error().message);
  }
  if (!labels::is_complete(*identity)) {
    return fail("allocation has no namespace, job or group to label with");
  }
  return identity;
}

Result<labels::AllocationIdentity> from_cni_args(const CniArgsClaim& claim,
                                                 std::string_view alloc_id,
                                                 const TrustRules& rules) {
  const cni::NomadWorkload& args = claim.args;
  if (!rules.cni_args_allowed) return fail("CNI_ARGS are not used (--cni-args-first=false)");
  if (!args.has_identity()) {
    return fail("CNI_ARGS carry no NOMAD_NAMESPACE, NOMAD_JOB_ID and NOMAD_GROUP_NAME");
  }
  if (args.alloc_id != alloc_id) {
    return fail("CNI_ARGS NOMAD_ALLOC_ID \"" + args.alloc_id +
                "\" is not the container ID: Nomad did not build them for this allocation");
  }
  if (labels::parent_job_of(args.job_id) != args.job_id) {
    return fail("CNI_ARGS job \"" + args.job_id +
                "\" is named like a periodic or dispatched child: only Nomad's ParentID may "
                "name a parent");
  }
  if (claim.use == CniArgsUse::before_nomad && rules.meta_labels) {
    return fail("--meta-labels is set and CNI_ARGS carry no meta");
  }
  labels::AllocationIdentity identity;
  identity.nomad_namespace = args.namespace_;
  identity.job_id = args.job_id;
  identity.task_group = args.group;
  return identity;
}

}  // namespace

Result<labels::AllocationIdentity> trusted_identity(const IdentityClaim& claim,
                                                    std::string_view alloc_id,
                                                    const TrustRules& rules) {
  if (const auto* nomad = std::get_if<NomadClaim>(&claim))
    return from_nomad(nomad->alloc, alloc_id);
  return from_cni_args(std::get<CniArgsClaim>(claim), alloc_id, rules);
}

}  // namespace cn::labeler
