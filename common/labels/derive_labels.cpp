#include "common/labels/derive_labels.h"

#include "common/labels/label_text.h"

namespace cn::labels {

namespace {

Label nomad_label(std::string_view key, std::string_view raw_value) {
  return Label{std::string(kSourceNomad), std::string(key), sanitize_label_value(raw_value)};
}

const std::string* find_meta(const std::map<std::string, std::string>& meta,
                             const std::string& key) {
  auto it = meta.find(key);
  return it == meta.end() ? nullptr : &it->second;
}

}  // namespace

bool is_complete(const AllocationIdentity& identity) {
  return !identity.nomad_namespace.empty() && !identity.job_id.empty() &&
         !identity.task_group.empty();
}

LabelSet derive_labels(const AllocationIdentity& identity, const LabelPolicy& policy) {
  LabelSet set;
  for (const auto& key : policy.meta_keys) {
    if (!meta_key_problem(key).empty()) continue;
    const std::string* value = find_meta(identity.group_meta, key);
    if (value == nullptr) value = find_meta(identity.job_meta, key);
    if (value != nullptr) set.insert(nomad_label(key, *value));
  }
  // Inserted last so that they win any collision, although meta_key_problem() already rules
  // one out.
  set.insert(nomad_label(kKeyNamespace, identity.nomad_namespace));
  set.insert(
      nomad_label(kKeyJob, identity.parent_id.empty() ? identity.job_id : identity.parent_id));
  set.insert(nomad_label(kKeyGroup, identity.task_group));
  if (policy.k8s_compat) {
    const auto k8s = std::string(kSourceK8s);
    set.insert(
        Label{k8s, std::string(kKeyK8sNamespace), sanitize_label_value(identity.nomad_namespace)});
    set.insert(Label{k8s, std::string(kKeyK8sCluster), sanitize_label_value(policy.cluster_name)});
  }
  return set;
}

bool is_ours(const Label& label) {
  if (label.source == kSourceNomad) return true;
  return label.source == kSourceK8s &&
         (label.key == kKeyK8sNamespace || label.key == kKeyK8sCluster);
}

LabelSet only_ours(const LabelSet& set) {
  LabelSet out;
  for (const auto& label : set) {
    if (is_ours(label)) out.insert(label);
  }
  return out;
}

}  // namespace cn::labels
