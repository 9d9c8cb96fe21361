#include "tests/fakes/cilium/policy_repository.h"

#include <algorithm>

namespace cn::fakes::cilium {

using nlohmann::json;

namespace {

std::vector<std::uint16_t> select(const std::vector<EndpointLabels>& endpoints,
                                  const std::vector<const EndpointSelector*>& selectors) {
  std::vector<std::uint16_t> out;
  for (const auto& ep : endpoints) {
    for (const EndpointSelector* s : selectors) {
      if (s->matches(ep.labels)) {
        out.push_back(ep.id);
        break;
      }
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<const EndpointSelector*> subject_selectors(const TranslatedPolicy& p) {
  std::vector<const EndpointSelector*> out;
  for (const auto& r : p.rules) {
    if (!r.node_subject) out.push_back(&r.subject);
  }
  return out;
}

std::vector<const EndpointSelector*> peer_selectors(const TranslatedPolicy& p) {
  std::vector<const EndpointSelector*> out;
  for (const auto& r : p.rules) {
    for (const auto& s : r.peers) out.push_back(&s);
  }
  return out;
}

}  // namespace

std::uint64_t PolicyRepository::upsert(const std::string& file, TranslatedPolicy policy) {
  std::lock_guard lock(mu_);
  ++revision_;
  loaded_[file] = Loaded{std::move(policy), revision_};
  return revision_;
}

std::optional<std::uint64_t> PolicyRepository::remove(const std::string& file) {
  std::lock_guard lock(mu_);
  if (loaded_.erase(file) == 0) return std::nullopt;
  return ++revision_;
}

void PolicyRepository::count_change(bool success) {
  std::lock_guard lock(mu_);
  ++(success ? changes_ok_ : changes_failed_);
}

void PolicyRepository::note_fatal(const std::string& message) {
  std::lock_guard lock(mu_);
  fatal_ = message;
}

std::uint64_t PolicyRepository::revision() const {
  std::lock_guard lock(mu_);
  return revision_;
}

std::vector<std::string> PolicyRepository::files() const {
  std::lock_guard lock(mu_);
  std::vector<std::string> out;
  for (const auto& [f, l] : loaded_) out.push_back(f);
  return out;
}

std::optional<TranslatedPolicy> PolicyRepository::policy(const std::string& file) const {
  std::lock_guard lock(mu_);
  auto it = loaded_.find(file);
  if (it == loaded_.end()) return std::nullopt;
  return it->second.policy;
}

std::vector<std::uint16_t> PolicyRepository::subjects(
    const std::string& file, const std::vector<EndpointLabels>& endpoints) const {
  std::lock_guard lock(mu_);
  auto it = loaded_.find(file);
  if (it == loaded_.end()) return {};
  return select(endpoints, subject_selectors(it->second.policy));
}

std::vector<std::uint16_t> PolicyRepository::peers(
    const std::string& file, const std::vector<EndpointLabels>& endpoints) const {
  std::lock_guard lock(mu_);
  auto it = loaded_.find(file);
  if (it == loaded_.end()) return {};
  return select(endpoints, peer_selectors(it->second.policy));
}

json PolicyRepository::report(const std::vector<EndpointLabels>& endpoints) const {
  std::lock_guard lock(mu_);
  json policies = json::array();
  for (const auto& [file, l] : loaded_) {
    json rules = json::array();
    for (const auto& r : l.policy.rules) rules.push_back(r.rule);
    policies.push_back({{"file", file},
                        {"name", l.policy.name},
                        {"namespace", l.policy.namespace_},
                        {"kind", l.policy.clusterwide() ? "CiliumClusterwideNetworkPolicy"
                                                        : "CiliumNetworkPolicy"},
                        {"revision", l.revision},
                        {"rules", rules},
                        {"subject_endpoints", select(endpoints, subject_selectors(l.policy))},
                        {"peer_endpoints", select(endpoints, peer_selectors(l.policy))}});
  }
  json out = {{"revision", revision_},
              {"policies", policies},
              {"policy_change_total", {{"success", changes_ok_}, {"fail", changes_failed_}}}};
  if (!fatal_.empty()) out["fatal"] = fatal_;
  return out;
}

json PolicyRepository::rules_model() const {
  std::lock_guard lock(mu_);
  json rules = json::array();
  for (const auto& [file, l] : loaded_) {
    for (const auto& r : l.policy.rules) {
      json rule = r.rule;
      // The directory watcher's labels: the file name is the policy's identity.
      json labels = json::array({{{"key", "filename"}, {"source", "directory"}, {"value", file}}});
      if (!l.policy.clusterwide()) {
        labels.push_back({{"key", "io.cilium.k8s.policy.namespace"},
                          {"source", "directory"},
                          {"value", l.policy.namespace_}});
      }
      labels.push_back({{"key", "policy-derived-from"},
                        {"source", "directory"},
                        {"value", l.policy.clusterwide() ? "CiliumClusterwideNetworkPolicy"
                                                         : "CiliumNetworkPolicy"}});
      rule["labels"] = labels;
      rules.push_back(rule);
    }
  }
  return json{{"policy", rules.dump(2)}, {"revision", revision_}};
}

}  // namespace cn::fakes::cilium
