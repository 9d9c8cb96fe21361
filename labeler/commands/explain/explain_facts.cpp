#include "labeler/commands/explain/explain_facts.h"

#include "labeler/policy/policy_audit.h"

#include <sys/stat.h>

#include <cerrno>
#include <set>

#include "common/policy/policy_text.h"
#include "common/state/state_store.h"
#include "common/util/alloc_id.h"
#include "labeler/labeling/identity_trust.h"
#include "labeler/policy/policy_directory.h"
#include "labeler/policy/policy_status.h"
#include "labeler/services/services_status.h"

namespace cn::labeler::explain {
namespace {

// The ID forms the labeler tries, from what the state entry and Nomad know of its addresses.
std::vector<cilium::EndpointRef> endpoint_refs(const std::string& alloc_id,
                                               const std::optional<state::StateEntry>& entry,
                                               const std::optional<NomadView>& nomad) {
  std::vector<std::string> ips;
  if (entry) ips = entry->ips;
  if (nomad && nomad->alloc.network_status) {
    for (const auto& ip :
         {nomad->alloc.network_status->address, nomad->alloc.network_status->address_ipv6}) {
      if (!ip.empty()) ips.push_back(ip);
    }
  }
  return cilium::endpoint_refs_for(alloc_id, entry ? entry->ifname : "", ips);
}

void find_endpoint(ExplainFacts& facts, const ExplainSettings& settings, cilium::CiliumApi& cilium,
                   Clock& clock) {
  for (const auto& ref : endpoint_refs(facts.alloc_id, facts.entry, facts.nomad)) {
    auto ep = cilium.endpoint(ref, Deadline{clock.now() + settings.call_timeout});
    if (ep) {
      // An address may have been reused by another allocation since.
      auto attachment = cilium::attachment_of(*ep);
      if (attachment && attachment->alloc_id != facts.alloc_id) continue;
      facts.endpoint = std::move(*ep);
      facts.endpoint_found_by = ref.to_string();
      return;
    }
    if (ep.error().kind == ErrorKind::not_found) continue;
    // 400: an agent that does not know this ID form; try the next.
    if (ep.error().kind == ErrorKind::http && ep.error().status == 400) continue;
    facts.cilium_error = ep.error().message;
    return;
  }
}

void ask_nomad(ExplainFacts& facts, const ExplainSettings& settings, nomad::NomadApi& nomad,
               Clock& clock) {
  auto alloc = nomad.allocation(facts.alloc_id, Deadline{clock.now() + settings.call_timeout});
  if (!alloc) {
    if (alloc.error().kind == ErrorKind::not_found) {
      facts.nomad_not_found = true;
    } else {
      facts.nomad_error = alloc.error().message;
    }
    return;
  }
  NomadView view;
  auto identity = trusted_identity(NomadClaim{*alloc}, facts.alloc_id, TrustRules{});
  if (identity) {
    view.identity = std::move(*identity);
  } else {
    view.identity_error = identity.error().message;
  }
  alloc->job.reset();
  view.alloc = std::move(*alloc);
  facts.nomad = std::move(view);
}

void find_policies(ExplainFacts& facts, const ExplainSettings& settings) {
  if (settings.policy_dir.empty()) return;
  // The endpoint's identity is what the agent matches; before there is one, what it will be.
  labels::LabelSet subject;
  if (facts.endpoint) {
    subject = cilium::identity_labels(*facts.endpoint);
  } else if (facts.desired) {
    subject = *facts.desired;
  } else {
    return;
  }
  auto files = policy::PolicyDirectory(settings.policy_dir).owned_files();
  if (!files) {
    facts.policy_error = files.error().message;
    return;
  }
  facts.policies_checked = true;
  for (const auto& [name, file] : *files) {
    auto doc = cn::policy::parse_policy_text(file.content, cn::policy::kMaxPolicyFileBytes);
    if (!doc) {
      facts.policies_not_applied.push_back({file.path, "", "unreadable", doc.error().message});
      continue;
    }
    if (!policy_selects(*doc, subject)) continue;
    facts.policies.push_back({doc->value("/metadata/name"_json_pointer, name),
                              file.source ? file.source->nomad_namespace : std::string(),
                              doc->value("kind", ""), file.path});
  }
  if (facts.endpoint) {
    facts.endpoint_audit = cilium::policy_audit_enabled(*facts.endpoint);
    // No claims file: the labeler never put an endpoint of this node in audit.
    if (auto audit = policy::read_audit_record(policy::policy_audit_path(settings.state_file))) {
      facts.global_audit = audit->global_audit;
      const std::string attachment = facts.endpoint->cni_attachment_id.empty()
                                         ? facts.endpoint->container_id
                                         : facts.endpoint->cni_attachment_id;
      for (const auto& claim : audit->claims) {
        if (claim.id == facts.endpoint->id && claim.attachment == attachment)
          facts.audit_policies = claim.policies;
      }
    }
  }
  // No status file: no distributor ran on this node, so it refused nothing.
  if (auto status = policy::read_policy_status(policy::policy_status_path(settings.state_file))) {
    for (const auto& [key, rec] : status->policies) {
      if (rec.state == policy::PolicyState::applied) continue;
      facts.policies_not_applied.push_back({rec.variable_path, rec.nomad_namespace,
                                            std::string(policy::to_string(rec.state)), rec.reason});
    }
  }
}

void find_services(ExplainFacts& facts, const ExplainSettings& settings) {
  auto status = read_services_status(services_status_path(settings.state_file));
  if (!status) {
    // No file: the services feature is off on this node (or has not run a pass yet).
    if (status.error().sys_errno != ENOENT) {
      facts.services_status = "status unreadable: " + status.error().message;
    }
    return;
  }
  facts.services_status =
      status->lb_api == LbApi::rest ? "the agent's REST API" : "state file " + status->lb_target;
  for (const auto& svc : status->services) {
    for (const auto& b : svc.backends) {
      if (b.alloc_id != facts.alloc_id) continue;
      facts.services.push_back({svc.nomad_namespace + "/" + svc.name, svc.vip,
                                std::string(to_string(b.state)), b.reason});
    }
  }
}

}  // namespace

std::vector<std::string> node_problems(const ExplainSettings& settings) {
  std::vector<std::string> problems;
  struct stat st {};
  if (::stat(settings.state_file.c_str(), &st) != 0 && errno == ENOENT) {
    problems.push_back("state file " + settings.state_file +
                       " does not exist: the plugin has recorded no allocation on this node, or "
                       "--state-file is not the one the plugin and the daemon use");
  }
  if (!settings.socket_path.empty()) {
    if (::stat(settings.socket_path.c_str(), &st) != 0) {
      problems.push_back("notification socket " + settings.socket_path +
                         " does not exist: the labeler is not running on this node, or --socket "
                         "is not the daemon's");
    } else if (!S_ISSOCK(st.st_mode)) {
      problems.push_back("notification socket " + settings.socket_path + " is not a socket");
    }
  }
  return problems;
}

Result<std::string> resolve_alloc_id(std::string_view query, const ExplainSettings& settings,
                                     cilium::CiliumApi& cilium, Clock& clock) {
  if (is_valid_alloc_id(query)) return std::string(query);
  if (query.empty()) return fail(ErrorKind::invalid, "an allocation ID or prefix is required");
  std::set<std::string> matches;
  if (auto doc = state::read_state_file(settings.state_file)) {
    for (const auto& [id, entry] : doc->allocations) {
      if (id.starts_with(query)) matches.insert(id);
    }
    for (const auto& [id, deleted] : doc->deleted) {
      if (id.starts_with(query)) matches.insert(id);
    }
  }
  if (auto list = cilium.endpoints(Deadline{clock.now() + settings.call_timeout})) {
    for (const auto& ep : list->endpoints) {
      auto attachment = cilium::attachment_of(ep);
      if (attachment && attachment->alloc_id.starts_with(query)) {
        matches.insert(attachment->alloc_id);
      }
    }
  }
  if (matches.empty()) {
    return fail(ErrorKind::not_found, "no allocation on this node starts with \"" +
                                          std::string(query) +
                                          "\" (state file and agent); give the full ID to ask "
                                          "Nomad");
  }
  if (matches.size() > 1) {
    std::string list;
    for (const auto& id : matches) list += (list.empty() ? "" : ", ") + id;
    return fail(ErrorKind::invalid, "\"" + std::string(query) + "\" matches " +
                                        std::to_string(matches.size()) + " allocations: " + list);
  }
  return *matches.begin();
}

ExplainFacts gather_facts(const std::string& alloc_id, const ExplainSettings& settings,
                          nomad::NomadApi& nomad, cilium::CiliumApi& cilium, Clock& clock) {
  ExplainFacts facts;
  facts.alloc_id = alloc_id;
  facts.node_problems = node_problems(settings);
  facts.meta_labels_given = !settings.label_policy.meta_keys.empty();
  if (auto doc = state::read_state_file(settings.state_file)) {
    if (auto it = doc->allocations.find(alloc_id); it != doc->allocations.end()) {
      facts.entry = it->second;
      facts.last_attempt = it->second.last_attempt;
    } else if (auto gone = doc->deleted.find(alloc_id); gone != doc->deleted.end()) {
      facts.deleted_unix_ms = gone->second;
    }
  } else {
    facts.state_error = doc.error().message;
  }
  ask_nomad(facts, settings, nomad, clock);
  find_endpoint(facts, settings, cilium, clock);

  facts.cluster_name = settings.fallback_cluster_name;
  if (auto name = cilium.cluster_name(Deadline{clock.now() + settings.call_timeout})) {
    if (!name->empty()) facts.cluster_name = *name;
  }
  if (facts.nomad && facts.nomad->identity && labels::is_complete(*facts.nomad->identity)) {
    labels::LabelPolicy policy = settings.label_policy;
    policy.cluster_name = facts.cluster_name;
    facts.desired = labels::derive_labels(*facts.nomad->identity, policy);
    if (facts.endpoint) facts.plan = cilium::plan_label_write(*facts.endpoint, *facts.desired);
  }
  find_policies(facts, settings);
  find_services(facts, settings);
  return facts;
}

}  // namespace cn::labeler::explain
