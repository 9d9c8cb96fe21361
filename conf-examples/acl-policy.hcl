# ACL policy for cilium-nomad-labeler, bound to the labeler job's workload identity:
#
#   nomad acl policy apply -namespace default -job cilium-nomad-labeler \
#     cilium-nomad-labeler acl-policy.hcl
#
# Only what the labeler calls; read-only except the services feature's own variables:
#   GET /v1/allocation/:id, GET /v1/job/:id,
#   GET /v1/event/stream?topic=Allocation   -> read-job in every namespace it labels
#   GET /v1/nodes                           -> node read (node reaping, --cluster-duties)
#   GET /v1/node/:id/allocations            -> node read (allocations of namespaces the
#                                              token cannot read are silently left out,
#                                              so "*" matters here too)

# Policies come from every namespace (docs/policies.md, "Delegation"):
#   GET /v1/vars?prefix=cilium/policies/&namespace=*  -> list (entries the token may not list
#                                                        are left out silently: a token that
#                                                        lists only some namespaces sees only
#                                                        their policies)
#   GET /v1/var/cilium/policies/<name>?namespace=N     -> read
# The services feature (docs/services.md; only with services on):
#   GET /v1/services?namespace=*, GET /v1/service/:name    -> read-job in every namespace
#   the VIP table and the node reports, in namespace default:
#   GET /v1/vars?prefix=cilium-nomad/services/, GET|PUT|DELETE /v1/var/cilium-nomad/services/*
#                                                           -> list, read, write, destroy
#   the VIP variable a job's template reads, in the service's namespace:
#   GET|PUT|DELETE /v1/var/cilium-nomad/vip/<service>       -> read, write, destroy
#
# Nomad applies the most specific namespace rule alone, not merged with "*": the "default"
# block below repeats read-job and the "*" block's variables, and a namespace block added here
# for another purpose must do the same.
namespace "*" {
  # "read-job" alone is enough; `policy = "read"` would also work but grants more
  # (scaling policies, CSI volume listing, ...).
  capabilities = ["read-job"]
  variables {
    path "cilium/policies/*" {
      capabilities = ["list", "read"]
    }
    path "cilium-nomad/vip/*" {
      capabilities = ["read", "write", "destroy"]
    }
  }
}

namespace "default" {
  capabilities = ["read-job"]
  variables {
    path "cilium/policies/*" {
      capabilities = ["list", "read"]
    }
    path "cilium-nomad/vip/*" {
      capabilities = ["read", "write", "destroy"]
    }
    path "cilium-nomad/services/*" {
      capabilities = ["list", "read", "write", "destroy"]
    }
  }
}

node {
  policy = "read"
}

# GET /v1/agent/self is the labeler's last way to learn which node it is on, after
# --node-id, the Nomad client's client-id file and the node list (node read, above), so
# agent access is not granted. Uncomment only if none of those works on your nodes:
#
# agent {
#   policy = "read"
# }
