# ACL policy for a client job that reads the VIP of services in its namespace
# (docs/services.md, "Jobs find their VIP"). A task reads its own job's variables without a
# policy, but the VIP variables are the labeler's, so each job that reads them gets this policy
# bound to it (Nomad binds to a job, group or task, never to a whole namespace):
#
#   nomad acl policy apply -namespace prod -job web web-reads-vips vip-read-policy.hcl
#
# Read only: the labeler writes these variables, and a job that could write them could send
# other jobs to an address of its choosing. Change "prod" to the job's namespace.
namespace "prod" {
  variables {
    path "cilium-nomad/vip/*" {
      capabilities = ["read"]
    }
  }
}
