#include "common/nomad/model/alloc_identity.h"

namespace cn::nomad {

Result<labels::AllocationIdentity> identity_of(const Allocation& alloc, const Job& job) {
  if (!job.id.empty() && job.id != alloc.job_id) {
    return fail("allocation " + alloc.id + " belongs to job \"" + alloc.job_id + "\", not \"" +
                job.id + "\"");
  }
  if (!job.nomad_namespace.empty() && job.nomad_namespace != alloc.nomad_namespace) {
    return fail("allocation " + alloc.id + " is in namespace \"" + alloc.nomad_namespace +
                "\", its job in \"" + job.nomad_namespace + "\"");
  }
  labels::AllocationIdentity identity;
  identity.nomad_namespace = alloc.nomad_namespace;
  identity.job_id = alloc.job_id;
  identity.parent_id = job.parent_id;
  identity.task_group = alloc.task_group;
  identity.job_meta = job.meta;
  if (const TaskGroup* group = job.find_group(alloc.task_group)) {
    identity.group_meta = group->meta;
  }
  return identity;
}

Result<labels::AllocationIdentity> identity_of(const Allocation& alloc) {
  if (!alloc.job) return fail("allocation " + alloc.id + " has no embedded job");
  return identity_of(alloc, *alloc.job);
}

}  // namespace cn::nomad
