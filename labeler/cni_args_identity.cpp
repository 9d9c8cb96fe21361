#include "labeler/cni_args_identity.h"

#include "common/labels/parent_job.h"

namespace cn::labeler {

std::optional<labels::AllocationIdentity> identity_from_cni_args(
    const cni::NomadWorkload& args, std::string_view alloc_id, const labels::LabelPolicy& policy) {
  if (!policy.meta_keys.empty() || !args.has_identity() || args.alloc_id != alloc_id) {
    return std::nullopt;
  }
  if (labels::parent_job_of(args.job_id) != args.job_id) return std::nullopt;
  labels::AllocationIdentity identity;
  identity.nomad_namespace = args.namespace_;
  identity.job_id = args.job_id;
  identity.task_group = args.group;
  return identity;
}

}  // namespace cn::labeler
