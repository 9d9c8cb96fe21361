// The fake agent's policies: starting the static directory watcher with the agent's settings,
// GET /v1/policy, the REST import PUT/DELETE /v1/policy of Cilium <= 1.18 (cilium/cilium
// daemon/cmd/policy.go, api/v1/openapi.yaml), and the policy report of the control API.
#include <algorithm>
#include <stdexcept>

#include "tests/fakes/cilium/agent_endpoint_api.h"
#include "tests/fakes/cilium/agent_state.h"
#include "tests/fakes/cilium/fake_cilium_agent.h"
#include "tests/fakes/cilium/policy_directory.h"
#include "tests/fakes/cilium/policy_selector.h"
#include "tests/fakes/cilium/request_validation.h"

namespace cn::fakes {

using nlohmann::json;

namespace {

// The repository entry holding every REST-imported rule. Directory entries are file names
// ending in .yaml, so this one can never collide with them.
constexpr const char* kRestEntry = "api:/v1/policy";

// A label of a DELETE or replace-with-labels filter, "source:key=value" as
// labels.ParseSelectLabel reads it: no source means any source.
struct SelectLabel {
  std::string source = "any";
  std::string key;
  std::string value;
};

SelectLabel parse_select_label(std::string_view text) {
  SelectLabel l;
  if (const auto colon = text.find(':'); colon != std::string_view::npos) {
    l.source = std::string(text.substr(0, colon));
    text.remove_prefix(colon + 1);
  }
  const auto eq = text.find('=');
  l.key = std::string(text.substr(0, eq));
  if (eq != std::string_view::npos) l.value = std::string(text.substr(eq + 1));
  return l;
}

// LabelArray.Contains: every wanted label is among the rule's labels.
bool rule_has_labels(const json& rule, const std::vector<SelectLabel>& wanted) {
  const json labels = rule.is_object() ? rule.value("labels", json::array()) : json::array();
  return std::all_of(wanted.begin(), wanted.end(), [&](const SelectLabel& w) {
    return labels.is_array() && std::any_of(labels.begin(), labels.end(), [&](const json& l) {
             return l.is_object() && l.value("key", "") == w.key &&
                    l.value("value", "") == w.value &&
                    (w.source == "any" || l.value("source", "") == w.source);
           });
  });
}

// Removes the rules carrying `wanted`; returns how many went.
std::size_t delete_by_labels(json& rules, const std::vector<SelectLabel>& wanted) {
  json kept = json::array();
  for (auto& r : rules) {
    if (!rule_has_labels(r, wanted)) kept.push_back(std::move(r));
  }
  const std::size_t deleted = rules.size() - kept.size();
  rules = std::move(kept);
  return deleted;
}

// The rules as the translator sees a policy: a clusterwide one holding them as `specs`.
json as_policy_document(const json& rules) {
  return json{{"apiVersion", "cilium.io/v2"},
              {"kind", "CiliumClusterwideNetworkPolicy"},
              {"metadata", {{"name", "rest-api"}}},
              {"specs", rules}};
}

// The translator injects selectors as the Kubernetes parser does (a clusterwide peer gets
// "k8s:io.kubernetes.pod.namespace exists"); the REST path only sanitizes, so imported rules are
// kept, and select, exactly as sent.
Result<cilium::TranslatedPolicy> translate_rest_rules(const json& rules) {
  auto translated = cilium::parse_policy(as_policy_document(rules), {});
  if (!translated) return translated;
  if (translated->rules.size() != rules.size())
    return fail("the translator dropped a rule");  // null rules are refused before
  for (std::size_t i = 0; i < rules.size(); ++i) {
    cilium::TranslatedRule& out = translated->rules[i];
    out.rule = rules[i];
    out.peers.clear();
    for (const char* section : {"ingress", "ingressDeny", "egress", "egressDeny"}) {
      const bool ingress = section[0] == 'i';
      for (const auto& part : rules[i].value(section, json::array())) {
        if (!part.is_object()) continue;
        for (const auto& sel :
             part.value(ingress ? "fromEndpoints" : "toEndpoints", json::array())) {
          auto es = cilium::EndpointSelector::from_json(sel);
          if (!es) return std::unexpected(es.error());
          out.peers.push_back(std::move(*es));
        }
      }
    }
  }
  return translated;
}

HttpResponse openapi_error(int status, int code, const std::string& message) {
  HttpResponse r;
  r.status = status;
  r.headers.emplace_back("Content-Type", "application/json");
  r.body = cilium::openapi_error_body(code, message) + "\n";
  return r;
}

std::string go_type_of(const json& j) {
  if (j.is_array()) return "array";
  if (j.is_object()) return "object";
  if (j.is_boolean()) return "bool";
  if (j.is_number()) return "number";
  return "string";
}

}  // namespace

void FakeCiliumAgent::start_policy_directory() {
  if (config_.version == CiliumVersion::v1_15) {
    throw std::invalid_argument("static-cnp-path needs Cilium 1.16 or later (emulating 1.15)");
  }
  policy_repository_ = std::make_unique<cilium::PolicyRepository>();
  cilium::PolicyDirectoryOptions opts;
  opts.path = config_.static_cnp_path;
  // policy-default-local-cluster is on by default from 1.19 (cilium PR #40108); of the emulated
  // releases 1.19 and 1.20 are that recent.
  if (config_.version >= CiliumVersion::v1_19) opts.injection.cluster_name = config_.cluster_name;
  opts.injection.flags = config_.options;
  opts.log = [this](const std::string& line) {
    {
      std::lock_guard lock(agent_log_mu_);
      agent_log_.push_back(line);
    }
    if (config_.on_log) config_.on_log(line);
  };
  opts.fatal = config_.on_fatal;
  opts.changed = [this](std::uint64_t revision) {
    std::lock_guard lock(state_->mu);
    // Endpoints report the repository revision they realized; the fake realizes at once.
    state_->policy_revision = std::max(state_->policy_revision + 1, revision);
  };
  policy_directory_ =
      std::make_unique<cilium::PolicyDirectory>(std::move(opts), *policy_repository_);
  if (auto st = policy_directory_->start(); !st) throw std::runtime_error(st.error().message);
}

HttpResponse FakeCiliumAgent::policy_route(const HttpRequest& req) {
  // "Will be removed in v1.19" (openapi.yaml); whether GET still answers there is unverified, so
  // the emulated 1.19 and 1.20 route it nowhere. PUT and DELETE are gone from 1.19 (cilium PR
  // #42705).
  if (config_.version >= CiliumVersion::v1_19) {
    return cilium::json_response(404,
                                 json{{"code", 404}, {"message", "path /v1/policy was not found"}});
  }
  if (req.method == "PUT") return policy_put(req);
  if (req.method == "DELETE") return policy_delete(req);
  return policy_get();
}

json FakeCiliumAgent::policy_model() const {
  json model = policy_repository_->rules_model();
  json rules = json::array();
  for (auto& r : json::parse(model["policy"].get<std::string>())) {
    const bool rest = std::any_of(r["labels"].begin(), r["labels"].end(), [](const json& l) {
      return l.value("key", "") == "filename" && l.value("value", "") == kRestEntry;
    });
    if (!rest) rules.push_back(std::move(r));
  }
  {
    std::lock_guard lock(rest_policy_mu_);
    for (const auto& r : rest_rules_) rules.push_back(r);
  }
  model["policy"] = rules.dump(2);
  return model;
}

std::uint64_t FakeCiliumAgent::set_rest_rules(json rules) {
  // Called with rest_policy_mu_ held. The rules were validated by the caller.
  std::uint64_t revision = 0;
  if (rules.empty()) {
    // Emptied: the entry goes. Only `PUT []` on an empty repository finds none, and upstream
    // bumps the revision for that add of nothing too.
    auto removed = policy_repository_->remove(kRestEntry);
    cilium::TranslatedPolicy none;
    none.name = "rest-api";
    revision = removed ? *removed : policy_repository_->upsert(kRestEntry, std::move(none));
  } else {
    auto translated = translate_rest_rules(rules);
    if (!translated)
      throw std::logic_error("validated rules failed: " + translated.error().message);
    revision = policy_repository_->upsert(kRestEntry, std::move(*translated));
  }
  rest_rules_ = std::move(rules);
  std::lock_guard lock(state_->mu);
  state_->policy_revision = std::max(state_->policy_revision + 1, revision);
  return revision;
}

// PUT /v1/policy: the body is a JSON *string* holding the rules array (the parameter's schema
// is `type: string`, bound by go-openapi's JSON consumer). Rules are sanitized, then added in
// one repository change; `replace` and `replace-with-labels` first delete by labels, each
// deletion that removes something being its own revision (pkg/policy/repository.go).
HttpResponse FakeCiliumAgent::policy_put(const HttpRequest& req) {
  auto bound = cilium::bind_body(req.body, "policy", true);
  if (!bound) {
    HttpResponse r;
    r.status = bound.error().status;
    r.headers.emplace_back("Content-Type", "application/json");
    r.body = bound.error().message + "\n";
    return r;
  }
  if (!bound->is_string()) {
    return openapi_error(400, 400,
                         "parsing policy body from \"\" failed, because json: cannot unmarshal " +
                             go_type_of(*bound) + " into Go value of type string");
  }
  json rules;
  try {
    rules = json::parse(bound->get<std::string>());
  } catch (const json::parse_error&) {
    return cilium::empty_response(400);  // PutPolicyInvalidPolicy, declared without a body
  }
  if (rules.is_null()) rules = json::array();
  const json doc = as_policy_document(rules);
  if (!rules.is_array() || !cilium::check_decodes(doc)) return cilium::empty_response(400);
  // A null element decodes to a nil *Rule; what upstream answers for it is unverified, the fake
  // refuses it as a failed import.
  if (std::any_of(rules.begin(), rules.end(), [](const json& r) { return !r.is_object(); }))
    return cilium::error_string_response(500, "rule is empty");
  if (!rules.empty()) {
    if (auto sane = translate_rest_rules(rules); !sane) {
      // Rule.Sanitize's own text, without the CRD wrapper the translator names.
      std::string message = sane.error().message;
      const std::string wrapper = "Invalid CiliumClusterwideNetworkPolicy spec: ";
      if (message.starts_with(wrapper)) message.erase(0, wrapper.size());
      return cilium::error_string_response(500, message);
    }
  }

  std::lock_guard lock(rest_policy_mu_);
  json current = rest_rules_;
  const auto replace = req.query_value("replace");
  if (replace && *replace == "true") {
    for (const auto& r : rules) {
      std::vector<SelectLabel> wanted;
      const json labels = r.is_object() ? r.value("labels", json::array()) : json::array();
      for (const auto& l : labels) {
        wanted.push_back({l.value("source", "unspec"), l.value("key", ""), l.value("value", "")});
      }
      if (delete_by_labels(current, wanted) > 0) set_rest_rules(current);
    }
  }
  std::vector<SelectLabel> replace_labels;
  for (auto [it, end] = req.query.equal_range("replace-with-labels"); it != end; ++it) {
    std::string_view all = it->second;  // collectionFormat csv
    while (!all.empty()) {
      const auto comma = all.find(',');
      replace_labels.push_back(parse_select_label(all.substr(0, comma)));
      all = comma == std::string_view::npos ? std::string_view{} : all.substr(comma + 1);
    }
  }
  if (!replace_labels.empty() && delete_by_labels(current, replace_labels) > 0) {
    set_rest_rules(current);
  }
  for (const auto& r : rules) current.push_back(r);
  const std::uint64_t revision = set_rest_rules(std::move(current));
  return cilium::json_response(200, json{{"revision", revision}, {"policy", rules.dump(2)}});
}

// DELETE /v1/policy: an optional Labels body. No labels deletes every rule (and succeeds on an
// empty repository); labels that match nothing answer 500 "policy not found": the handler wraps
// the 404 error in api.Error(DeletePolicyFailureCode, ...), so the spec's 404 never goes out.
// Deliberately partial: upstream deletes matching rules of any origin (a label-less DELETE also
// empties what the directory loaded); the fake's DELETE reaches only REST-imported rules.
HttpResponse FakeCiliumAgent::policy_delete(const HttpRequest& req) {
  auto filter = cilium::parse_label_filter(req.body);
  if (!filter) {
    HttpResponse r;
    r.status = filter.error().status;
    r.headers.emplace_back("Content-Type", "application/json");
    r.body = filter.error().message + "\n";
    return r;
  }
  std::vector<SelectLabel> wanted;
  if (*filter) {
    for (const auto& l : **filter) wanted.push_back(parse_select_label(l));
  }
  std::uint64_t revision = 0;
  {
    std::lock_guard lock(rest_policy_mu_);
    json current = rest_rules_;
    const std::size_t deleted = delete_by_labels(current, wanted);
    if (deleted == 0 && !wanted.empty()) {
      return cilium::error_string_response(500, "policy not found");
    }
    revision = deleted > 0 ? set_rest_rules(std::move(current)) : policy_repository_->revision();
  }
  json model = policy_model();
  model["revision"] = revision;
  return cilium::json_response(200, model);
}

HttpResponse FakeCiliumAgent::policy_get() {
  return cilium::json_response(200, policy_model());
}

json FakeCiliumAgent::policies() const {
  std::vector<cilium::EndpointLabels> eps;
  {
    std::lock_guard lock(state_->mu);
    for (const auto& [uid, ep] : state_->endpoints) {
      eps.push_back(cilium::EndpointLabels{ep.id, ep.labels.identity_labels()});
    }
  }
  json out = policy_repository_ ? policy_repository_->report(eps)
                                : json{{"revision", 1}, {"policies", json::array()}};
  out["static_cnp_path"] = config_.static_cnp_path;
  out["cluster_name"] = config_.cluster_name;
  out["log"] = agent_log();
  return out;
}

std::vector<std::string> FakeCiliumAgent::agent_log() const {
  std::lock_guard lock(agent_log_mu_);
  return agent_log_;
}

}  // namespace cn::fakes
