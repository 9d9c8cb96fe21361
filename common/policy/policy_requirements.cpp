#include "common/policy/policy_requirements.h"

#include <algorithm>
#include <array>
#include <string_view>

#include "common/policy/policy_text.h"

namespace cn::policy {
namespace {

using cilium::AgentOption;
using nlohmann::json;

// Collects the first use of each option while walking one document.
class RequirementCollector {
 public:
  void need(AgentOption option, const std::string& pointer, std::string_view feature,
            MissingOptionEffect effect) {
    for (const auto& r : out_) {
      if (r.option == option) return;
    }
    out_.push_back({option, pointer, std::string(feature), effect});
  }
  std::vector<PolicyRequirement> take() { return std::move(out_); }

 private:
  std::vector<PolicyRequirement> out_;
};

std::string req_child(const std::string& pointer, std::string_view key) {
  return pointer + "/" + pointer_token(key);
}

bool req_nonempty_array(const json& obj, std::string_view key) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_array() && !it->empty();
}

// L7Rules.IsEmpty (pkg/policy/api/l7.go): any HTTP, Kafka, DNS or generic L7 entry makes the
// port rule an L7 one, which IngressRule/EgressRule.Validate refuse without enable-l7-proxy.
bool req_has_l7_rules(const json& port_rule) {
  auto rules = port_rule.find("rules");
  if (rules == port_rule.end() || !rules->is_object()) return false;
  constexpr std::array<std::string_view, 4> kL7Members = {"http", "kafka", "dns", "l7"};
  return std::ranges::any_of(kL7Members,
                             [&](std::string_view key) { return req_nonempty_array(*rules, key); });
}

void req_direction(const json& entry, const std::string& p, bool deny, RequirementCollector& c) {
  if (!entry.is_object()) return;
  // IngressCommonRule/EgressCommonRule.Validate: ErrFromToNodesRequiresNodeSelectorOption.
  for (const auto* key : {"fromNodes", "toNodes"}) {
    if (req_nonempty_array(entry, key)) {
      c.need(AgentOption::node_selector_labels, req_child(p, key), key,
             MissingOptionEffect::fatal_at_restart);
    }
  }
  // Ingress/Egress(Deny)Rule.Validate: "ICMP rules can only be applied when the
  // enable-icmp-rules flag is set".
  if (req_nonempty_array(entry, "icmps")) {
    c.need(AgentOption::icmp_rules, req_child(p, "icmps"), "icmps",
           MissingOptionEffect::fatal_at_restart);
  }
  if (!deny) {
    if (auto ports = entry.find("toPorts"); ports != entry.end() && ports->is_array()) {
      const std::string pp = req_child(p, "toPorts");
      for (std::size_t i = 0; i < ports->size(); ++i) {
        if (req_has_l7_rules((*ports)[i])) {
          // "L7 policy is not supported since L7 proxy is not enabled".
          c.need(AgentOption::l7_proxy, req_child(pp + "/" + std::to_string(i), "rules"),
                 "L7 rules", MissingOptionEffect::fatal_at_restart);
        }
      }
    }
    // toFQDNs passes validation without the proxy, but only the DNS proxy (part of the L7
    // proxy, pkg/fqdn/dnsproxy) learns the names' addresses: the rule would never allow.
    if (req_nonempty_array(entry, "toFQDNs")) {
      c.need(AgentOption::l7_proxy, req_child(p, "toFQDNs"), "toFQDNs",
             MissingOptionEffect::not_enforced);
    }
    // mode "required" is loaded either way; without the auth manager and a mutual-auth
    // handler (pkg/auth) the agent drops the traffic it was meant to allow.
    if (auto auth = entry.find("authentication"); auth != entry.end() && auth->is_object()) {
      if (auto mode = auth->find("mode"); mode != auth->end() && *mode == "required") {
        const std::string mp = req_child(req_child(p, "authentication"), "mode");
        c.need(AgentOption::mesh_auth, mp, "authentication.mode: required",
               MissingOptionEffect::not_enforced);
        c.need(AgentOption::mesh_auth_mutual, mp, "authentication.mode: required",
               MissingOptionEffect::not_enforced);
      }
    }
  }
}

void req_rule(const json& rule, const std::string& p, RequirementCollector& c) {
  if (!rule.is_object()) return;
  // A host policy is loaded without the host firewall, but no host endpoint enforces it.
  if (auto nodes = rule.find("nodeSelector"); nodes != rule.end() && !nodes->is_null()) {
    c.need(AgentOption::host_firewall, req_child(p, "nodeSelector"), "nodeSelector",
           MissingOptionEffect::not_enforced);
  }
  for (auto [key, deny] : {std::pair{"ingress", false}, std::pair{"ingressDeny", true},
                           std::pair{"egress", false}, std::pair{"egressDeny", true}}) {
    auto list = rule.find(key);
    if (list == rule.end() || !list->is_array()) continue;
    const std::string lp = req_child(p, key);
    for (std::size_t i = 0; i < list->size(); ++i) {
      req_direction((*list)[i], lp + "/" + std::to_string(i), deny, c);
    }
  }
}

}  // namespace

std::vector<PolicyRequirement> policy_requirements(const json& doc) {
  RequirementCollector c;
  if (!doc.is_object()) return {};
  if (auto spec = doc.find("spec"); spec != doc.end()) req_rule(*spec, "/spec", c);
  if (auto specs = doc.find("specs"); specs != doc.end() && specs->is_array()) {
    for (std::size_t i = 0; i < specs->size(); ++i) {
      req_rule((*specs)[i], "/specs/" + std::to_string(i), c);
    }
  }
  return c.take();
}

std::vector<PolicyRequirement> unmet_requirements(const std::vector<PolicyRequirement>& needed,
                                                  const cilium::AgentOptions& options) {
  std::vector<PolicyRequirement> out;
  for (const auto& r : needed) {
    if (!options.enabled(r.option)) out.push_back(r);
  }
  return out;
}

std::string requirement_reason(const PolicyRequirement& req, const cilium::AgentOptions& options) {
  const auto& info = cilium::agent_option_info(req.option);
  const auto& value = options.get(req.option);
  std::string out = req.pointer + ": " + req.feature + " needs the agent option " +
                    std::string(info.flag) + " (" + (info.upstream_default ? "on" : "off") +
                    " by default; this agent: " + (value.enabled ? "on" : "off") + ", from " +
                    std::string(cilium::to_string(value.origin)) + ")";
  out += req.effect == MissingOptionEffect::fatal_at_restart
             ? "; without it the agent refuses the policy and exits at its next start"
             : "; without it the agent loads the policy but cannot enforce it";
  return out;
}

}  // namespace cn::policy
