#pragma once
// The label contract: what identity a Nomad workload gets. Pure function of stable facts about
// the allocation's job; nothing per instance (alloc ID, IP, times) may enter, or every
// allocation would mint its own cluster identity.
#include <map>
#include <string>

#include "common/labels/label_policy.h"
#include "common/labels/label_set.h"

namespace cn::labels {

inline constexpr std::string_view kKeyNamespace = "nomad.namespace";
inline constexpr std::string_view kKeyJob = "nomad.job";
inline constexpr std::string_view kKeyGroup = "nomad.group";
// Keys Cilium's policy translation puts into peer selectors (source `k8s`).
inline constexpr std::string_view kKeyK8sNamespace = "io.kubernetes.pod.namespace";
inline constexpr std::string_view kKeyK8sCluster = "io.cilium.k8s.policy.cluster";

// What the labeler knows about an allocation, from Nomad or (degraded) from CNI_ARGS.
struct AllocationIdentity {
  std::string nomad_namespace;
  std::string job_id;
  std::string parent_id;  // Job.ParentID; empty for a job that is not a periodic/dispatch child
  std::string task_group;
  std::map<std::string, std::string> job_meta;
  std::map<std::string, std::string> group_meta;
};

// Whether the identity names a workload at all. A set derived from an identity with an empty
// namespace, job or group would merge unrelated workloads into one identity; callers must not
// write it.
bool is_complete(const AllocationIdentity& identity);

// Always, all with source `nomad`:
//   nomad.namespace=<namespace>  nomad.job=<ParentID if set, else job ID>  nomad.group=<group>
// plus <key>=<value> for each policy key found in the meta, group meta winning over job meta,
// and, unless policy.k8s_compat is off, with source `k8s`:
//   io.kubernetes.pod.namespace=<namespace>  io.cilium.k8s.policy.cluster=<cluster name>
// Task meta is not used: the network identity belongs to the whole allocation.
// Every value passes through sanitize_label_value(). An empty value stays empty (the agent
// accepts `nomad:key`). Meta keys that fail meta_key_problem() are skipped even when a policy
// names them, so no input can produce a `reserved:` label, another source, or a forged
// `nomad.*` key.
LabelSet derive_labels(const AllocationIdentity& identity, const LabelPolicy& policy);

// Whether derive_labels() can produce a label of this source and key, whatever the policy: the
// labels a write may remove when they are no longer desired (a `k8s:` compat label stays ours
// after --k8s-compat-labels=false, so turning it off removes it).
bool is_ours(const Label& label);
LabelSet only_ours(const LabelSet& set);

}  // namespace cn::labels
