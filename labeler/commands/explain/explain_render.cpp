#include "labeler/commands/explain/explain_render.h"

#include "common/cilium/model/endpoint.h"
#include "common/util/join.h"

namespace cn::labeler::explain {
namespace {

using nlohmann::json;

std::string or_dash(const std::string& s) {
  return s.empty() ? "-" : s;
}

// "label     text", the label column wide enough for the longest label.
void line(std::string& out, std::string_view label, const std::string& text) {
  out += label;
  out.append(label.size() < 12 ? 12 - label.size() : 1, ' ');
  out += text;
  out += '\n';
}

std::string deleted_at(const ExplainFacts& facts) {
  return rfc3339(WallTime{std::chrono::milliseconds{*facts.deleted_unix_ms}});
}

std::string state_text(const ExplainFacts& facts) {
  if (!facts.state_error.empty()) return "unreadable: " + facts.state_error;
  if (!facts.entry && facts.deleted_unix_ms) return "removed by DEL at " + deleted_at(facts);
  if (!facts.entry) return "no entry (the plugin never recorded an ADD for it on this node)";
  const auto& e = *facts.entry;
  std::string text = "ifname " + or_dash(e.ifname) + ", ips " + or_dash(join(e.ips, ",")) +
                     ", added " + or_dash(e.added_at);
  if (e.labeled) {
    text += "; labeled " + e.labeled->at + " (endpoint " + std::to_string(e.labeled->endpoint_id) +
            ", identity " +
            (e.labeled->identity ? std::to_string(e.labeled->identity) : "resolving") + ")";
  } else {
    text += "; not recorded as labeled";
  }
  return text;
}

std::string endpoint_text(const ExplainFacts& facts) {
  if (!facts.cilium_error.empty()) return "agent unreachable: " + facts.cilium_error;
  if (!facts.endpoint) return "none found (by attachment ID, container ID or IP)";
  const auto& ep = *facts.endpoint;
  return std::to_string(ep.id) + " (found by " + facts.endpoint_found_by + "), state " +
         or_dash(ep.state) + ", identity " + std::to_string(ep.identity_id) + ", policy revision " +
         std::to_string(ep.realized_policy_revision);
}

std::string nomad_text(const ExplainFacts& facts) {
  if (facts.nomad_not_found) return "unknown (404)";
  if (!facts.nomad) return "unreachable: " + facts.nomad_error;
  const auto& a = facts.nomad->alloc;
  std::string text = "namespace " + or_dash(a.nomad_namespace) + ", job " + or_dash(a.job_id);
  if (facts.nomad->identity && !facts.nomad->identity->parent_id.empty()) {
    text += " (parent " + facts.nomad->identity->parent_id + ")";
  }
  text += ", group " + or_dash(a.task_group) + "; client " + or_dash(a.client_status) +
          ", desired " + or_dash(a.desired_status);
  if (!facts.nomad->identity_error.empty()) text += "; " + facts.nomad->identity_error;
  return text;
}

std::string difference_text(const ExplainFacts& facts) {
  if (!facts.plan) return "-";
  const auto& plan = *facts.plan;
  if (plan.missing.empty() && plan.stale.empty()) return "none";
  std::string text;
  if (!plan.missing.empty()) text += "missing " + join(plan.missing, " ");
  if (!plan.stale.empty())
    text += std::string(text.empty() ? "" : "; ") + "stale " + join(plan.stale, " ");
  return text;
}

// "default/api 10.96.0.5 ready; default/admin 10.96.0.9 not-ready: check admin-alive: failure
// (state file /var/run/cilium/nomad-services.json)".
std::string services_text(const ExplainFacts& facts) {
  std::string text;
  for (const auto& s : facts.services) {
    if (!text.empty()) text += "; ";
    text += s.service + " " + (s.vip.empty() ? "no VIP" : s.vip) + " " + s.state +
            (s.reason.empty() ? "" : ": " + s.reason);
  }
  if (text.empty()) text = "a backend of no Nomad service";
  return text + " (" + facts.services_status + ")";
}

std::string policies_text(const ExplainFacts& facts) {
  if (!facts.policy_error.empty()) return "policy directory unreadable: " + facts.policy_error;
  if (facts.policies.empty()) return "none of the distributed policies selects it";
  std::vector<std::string> names;
  for (const auto& p : facts.policies) {
    names.push_back(
        p.name + " (" + p.kind +
        (p.nomad_namespace.empty() ? "" : ", from Nomad namespace " + p.nomad_namespace) + ")");
  }
  return join(names, ", ");
}

std::string not_applied_text(const ExplainFacts& facts) {
  std::vector<std::string> items;
  for (const auto& p : facts.policies_not_applied) {
    const std::string where =
        p.nomad_namespace.empty() ? p.source : p.source + " in namespace " + p.nomad_namespace;
    items.push_back(where + " (" + p.state + (p.reason.empty() ? "" : ": " + p.reason) + ")");
  }
  return join(items, "; ");
}

// Only said when there is something to say: audit is the exception, enforcing the rule.
std::string audit_text(const ExplainFacts& facts) {
  if (facts.endpoint_audit != true) return "";
  if (facts.global_audit) return "in audit mode: the agent's --policy-audit-mode is on";
  if (facts.audit_policies.empty())
    return "in audit mode (PolicyAuditMode Enabled), not set by the labeler";
  return "in audit mode (PolicyAuditMode Enabled), set by the labeler for " +
         join(facts.audit_policies, ", ") + ": no policy drops its traffic";
}

json last_attempt_json(const ExplainFacts& facts) {
  if (!facts.last_attempt) return nullptr;
  return {{"reason", facts.last_attempt->reason},
          {"detail", facts.last_attempt->detail},
          {"at", facts.last_attempt->at}};
}

}  // namespace

std::string render_text(const ExplainFacts& facts, const Verdict& verdict) {
  std::string out;
  for (const auto& problem : facts.node_problems) line(out, "node", problem);
  line(out, "allocation", facts.alloc_id);
  line(out, "state", state_text(facts));
  if (facts.last_attempt) {
    line(out, "last attempt",
         facts.last_attempt->reason +
             (facts.last_attempt->detail.empty() ? "" : ": " + facts.last_attempt->detail) +
             (facts.last_attempt->at.empty() ? "" : " (" + facts.last_attempt->at + ")"));
  }
  line(out, "endpoint", endpoint_text(facts));
  if (facts.endpoint) line(out, "  labels", or_dash(join(facts.endpoint->identity_labels, " ")));
  line(out, "nomad", nomad_text(facts));
  line(out, "derived", facts.desired ? join(facts.desired->to_strings(), " ") : "-");
  line(out, "difference", difference_text(facts));
  line(out, "cluster", facts.cluster_name);
  if (!facts.policy_error.empty() || facts.policies_checked) {
    line(out, "policies", policies_text(facts));
    if (!facts.policies_not_applied.empty()) line(out, "  not applied", not_applied_text(facts));
    if (const std::string audit = audit_text(facts); !audit.empty()) line(out, "  audit", audit);
  } else {
    line(out, "policies", "not looked at (give --policy-dir)");
  }
  if (!facts.services_status.empty()) line(out, "services", services_text(facts));
  line(out, "verdict",
       std::string(verdict.ok() ? "OK " : "PROBLEM ") + std::string(to_string(verdict.kind)) +
           ": " + verdict.summary);
  if (!verdict.fix.empty()) line(out, "fix", verdict.fix);
  return out;
}

json render_json(const ExplainFacts& facts, const Verdict& verdict) {
  json out = {{"allocation", facts.alloc_id}, {"node_problems", facts.node_problems}};
  if (!facts.state_error.empty()) {
    out["state"] = {{"error", facts.state_error}};
  } else if (!facts.entry && facts.deleted_unix_ms) {
    out["state"] = {{"removed_by_del_at", deleted_at(facts)}};
  } else {
    out["state"] = facts.entry ? state::to_json(state::StateDoc{{{facts.alloc_id, *facts.entry}},
                                                                {}})["allocations"][facts.alloc_id]
                               : json(nullptr);
  }
  out["last_attempt"] = last_attempt_json(facts);
  if (!facts.cilium_error.empty()) {
    out["endpoint"] = {{"error", facts.cilium_error}};
  } else if (facts.endpoint) {
    const auto& ep = *facts.endpoint;
    out["endpoint"] = {{"id", ep.id},
                       {"found_by", facts.endpoint_found_by},
                       {"state", ep.state},
                       {"identity", ep.identity_id},
                       {"identity_labels", ep.identity_labels},
                       {"policy_revision", ep.realized_policy_revision}};
  } else {
    out["endpoint"] = nullptr;
  }
  if (facts.nomad_not_found) {
    out["nomad"] = {{"error", "not found"}, {"not_found", true}};
  } else if (!facts.nomad) {
    out["nomad"] = {{"error", facts.nomad_error}};
  } else {
    const auto& a = facts.nomad->alloc;
    json nomad = {{"namespace", a.nomad_namespace},
                  {"job", a.job_id},
                  {"group", a.task_group},
                  {"client_status", a.client_status},
                  {"desired_status", a.desired_status},
                  {"modify_index", a.modify_index}};
    if (facts.nomad->identity) nomad["parent_job"] = facts.nomad->identity->parent_id;
    if (!facts.nomad->identity_error.empty()) nomad["error"] = facts.nomad->identity_error;
    out["nomad"] = std::move(nomad);
  }
  out["cluster"] = facts.cluster_name;
  out["derived_labels"] = facts.desired ? json(facts.desired->to_strings()) : json(nullptr);
  if (facts.plan) {
    out["difference"] = {{"missing", facts.plan->missing}, {"stale", facts.plan->stale}};
  } else {
    out["difference"] = nullptr;
  }
  json policies = json::array();
  for (const auto& p : facts.policies) {
    policies.push_back({{"name", p.name},
                        {"nomad_namespace", p.nomad_namespace},
                        {"kind", p.kind},
                        {"file", p.file}});
  }
  out["policies"] = facts.policies_checked ? std::move(policies) : json(nullptr);
  if (!facts.policy_error.empty()) out["policy_error"] = facts.policy_error;
  json not_applied = json::array();
  for (const auto& p : facts.policies_not_applied) {
    not_applied.push_back({{"source", p.source},
                           {"nomad_namespace", p.nomad_namespace},
                           {"state", p.state},
                           {"reason", p.reason}});
  }
  out["policies_not_applied"] = facts.policies_checked ? std::move(not_applied) : json(nullptr);
  out["audit"] = facts.endpoint_audit ? json{{"enabled", *facts.endpoint_audit},
                                             {"by_labeler_for", facts.audit_policies},
                                             {"agent_global", facts.global_audit}}
                                      : json(nullptr);
  json services = json::array();
  for (const auto& s : facts.services) {
    services.push_back(
        {{"service", s.service}, {"vip", s.vip}, {"state", s.state}, {"reason", s.reason}});
  }
  out["services"] = facts.services_status.empty()
                        ? json(nullptr)
                        : json{{"fed_through", facts.services_status}, {"backends", services}};
  out["verdict"] = {{"ok", verdict.ok()},
                    {"kind", std::string(to_string(verdict.kind))},
                    {"summary", verdict.summary},
                    {"fix", verdict.fix}};
  return out;
}

}  // namespace cn::labeler::explain
