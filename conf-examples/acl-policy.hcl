# ACL policy for cilium-nomad-labeler, bound to the labeler job's workload identity:
#
#   nomad acl policy apply -namespace default -job cilium-nomad-labeler \
#     cilium-nomad-labeler acl-policy.hcl
#
# Read-only, and only what the labeler calls:
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
# Nomad applies the most specific namespace rule alone, not merged with "*": a namespace block
# added here for another purpose must repeat read-job and this variables block.
namespace "*" {
  # "read-job" alone is enough; `policy = "read"` would also work but grants more
  # (scaling policies, CSI volume listing, ...).
  capabilities = ["read-job"]
  variables {
    path "cilium/policies/*" {
      capabilities = ["list", "read"]
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
