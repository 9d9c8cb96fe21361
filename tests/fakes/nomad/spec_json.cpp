#include "tests/fakes/nomad/spec_json.h"
#include "tests/fakes/http/status_error.h"

namespace cn::fakes {

using nlohmann::json;

namespace {

StringMap string_map(const json& j, const char* key) {
  StringMap out;
  if (!j.contains(key) || j.at(key).is_null()) return out;
  for (const auto& [k, v] : j.at(key).items())
    out[k] = v.is_string() ? v.get<std::string>() : v.dump();
  return out;
}

template <class F>
auto guarded(F f) -> decltype(f()) {
  try {
    return f();
  } catch (const json::exception& e) {
    return http_fail(std::string("bad spec: ") + e.what(), 400);
  }
}

TaskSpec task_from_json(const json& j) {
  TaskSpec t;
  t.name = j.value("name", t.name);
  t.driver = j.value("driver", t.driver);
  if (j.contains("config")) t.config = j.at("config");
  t.meta = string_map(j, "meta");
  t.cpu = j.value("cpu", t.cpu);
  t.memory_mb = j.value("memory_mb", t.memory_mb);
  return t;
}

GroupSpec group_from_json(const json& j) {
  GroupSpec g;
  g.name = j.value("name", g.name);
  g.count = j.value("count", g.count);
  g.meta = string_map(j, "meta");
  g.network_mode = j.value("network_mode", g.network_mode);
  g.cni_args = string_map(j, "cni_args");
  g.disk_mb = j.value("disk_mb", g.disk_mb);
  for (const auto& p : j.value("ports", json::array())) {
    PortSpec port;
    port.label = p.at("label").get<std::string>();
    port.to = p.value("to", 0);
    if (p.contains("static")) port.static_value = p.at("static").get<int>();
    g.ports.push_back(port);
  }
  for (const auto& s : j.value("services", json::array())) {
    ServiceSpec svc;
    svc.name = s.at("name").get<std::string>();
    svc.port_label = s.value("port", "");
    svc.tags = s.value("tags", std::vector<std::string>{});
    svc.meta = string_map(s, "meta");
    svc.provider = s.value("provider", svc.provider);
    svc.address_mode = s.value("address_mode", svc.address_mode);
    svc.task = s.value("task", "");
    svc.canary_tags = s.value("canary_tags", std::vector<std::string>{});
    for (const auto& c : s.value("checks", json::array())) {
      CheckSpec check;
      check.name = c.at("name").get<std::string>();
      check.type = c.value("type", check.type);
      check.readiness = c.value("on_update", "") == "ignore";
      svc.checks.push_back(check);
    }
    g.services.push_back(svc);
  }
  for (const auto& t : j.value("tasks", json::array())) g.tasks.push_back(task_from_json(t));
  return g;
}

}  // namespace

Result<JobSpec> job_spec_from_json(const json& j) {
  return guarded([&]() -> Result<JobSpec> {
    JobSpec s;
    s.id = j.at("id").get<std::string>();
    s.namespace_ = j.value("namespace", s.namespace_);
    s.name = j.value("name", "");
    s.type = j.value("type", s.type);
    s.region = j.value("region", s.region);
    s.datacenters = j.value("datacenters", s.datacenters);
    s.node_pool = j.value("node_pool", s.node_pool);
    s.priority = j.value("priority", s.priority);
    s.meta = string_map(j, "meta");
    s.periodic_spec = j.value("periodic", "");
    s.parameterized = j.value("parameterized", false);
    for (const auto& g : j.value("groups", json::array())) s.groups.push_back(group_from_json(g));
    return s;
  });
}

Result<PlaceRequest> place_request_from_json(const json& j) {
  return guarded([&]() -> Result<PlaceRequest> {
    PlaceRequest r;
    r.job_id = j.at("job").get<std::string>();
    r.namespace_ = j.value("namespace", r.namespace_);
    r.group = j.value("group", "");
    r.node_id = j.value("node", "");
    r.alloc_id = j.value("id", "");
    if (j.contains("name_index")) r.name_index = j.at("name_index").get<int>();
    r.eval_id = j.value("eval_id", "");
    r.deployment_id = j.value("deployment_id", "");
    r.signing_key_id = j.value("signing_key_id", "");
    if (j.contains("ports")) {
      for (const auto& [k, v] : j.at("ports").items()) r.port_values[k] = v.get<int>();
    }
    r.previous_allocation = j.value("previous_allocation", "");
    return r;
  });
}

Result<TokenSpec> token_from_json(const json& j) {
  return guarded([&]() -> Result<TokenSpec> {
    if (j.contains("policy")) {
      return token_with_policy(j.at("secret").get<std::string>(),
                               j.at("policy").get<std::string>());
    }
    TokenSpec t;
    t.secret = j.at("secret").get<std::string>();
    t.namespaces = j.value("namespaces", std::vector<std::string>{});
    for (const auto& r : j.value("variables", json::array())) {
      VariablePathRule rule;
      rule.namespace_ = r.value("namespace", rule.namespace_);
      rule.path = r.at("path").get<std::string>();
      rule.capabilities = r.at("capabilities").get<std::vector<std::string>>();
      t.variables.push_back(std::move(rule));
    }
    t.management = j.value("management", t.namespaces.empty() && t.variables.empty());
    t.node_read = j.value("node_read", true);
    t.agent_read = j.value("agent_read", true);
    return t;
  });
}

Result<VariableRecord> variable_spec_from_json(const json& j) {
  return guarded([&]() -> Result<VariableRecord> {
    VariableRecord v;
    v.namespace_ = j.value("namespace", v.namespace_);
    v.path = j.at("path").get<std::string>();
    v.items = string_map(j, "items");
    return v;
  });
}

Result<NodeRecord> node_from_json(const json& j) {
  return guarded([&]() -> Result<NodeRecord> {
    NodeRecord n;
    n.id = j.at("id").get<std::string>();
    n.name = j.value("name", n.id.substr(0, 8));
    n.ip = j.value("ip", n.ip);
    n.datacenter = j.value("datacenter", n.datacenter);
    n.node_pool = j.value("node_pool", n.node_pool);
    n.status = j.value("status", n.status);
    n.drain = j.value("drain", false);
    n.meta = string_map(j, "meta");
    return n;
  });
}

Result<NetworkStatusSpec> network_status_from_json(const json& j) {
  return guarded([&]() -> Result<NetworkStatusSpec> {
    NetworkStatusSpec n;
    n.address = j.value("address", "");
    n.address_ipv6 = j.value("address_ipv6", "");
    n.interface_name = j.value("interface", n.interface_name);
    return n;
  });
}

Status FakeNomad::load_scenario(const json& doc) {
  try {
    if (doc.contains("acl_enabled")) set_acl_enabled(doc.at("acl_enabled").get<bool>());
    for (const auto& t : doc.value("tokens", json::array())) {
      auto token = token_from_json(t);
      if (!token) return std::unexpected(token.error());
      add_token(*token);
    }
    for (const auto& v : doc.value("variables", json::array())) {
      auto spec = variable_spec_from_json(v);
      if (!spec) return std::unexpected(spec.error());
      auto stored = put_variable(spec->namespace_, spec->path, spec->items);
      if (!stored) return std::unexpected(stored.error());
    }
    for (const auto& n : doc.value("nodes", json::array())) {
      auto node = node_from_json(n);
      if (!node) return std::unexpected(node.error());
      add_node(*node);
    }
    for (const auto& j : doc.value("jobs", json::array())) {
      auto spec = job_spec_from_json(j);
      if (!spec) return std::unexpected(spec.error());
      if (auto r = register_job(*spec); !r) return std::unexpected(r.error());
    }
    for (const auto& a : doc.value("allocs", json::array())) {
      auto req = place_request_from_json(a);
      if (!req) return std::unexpected(req.error());
      auto id = place_alloc(*req);
      if (!id) return std::unexpected(id.error());
      if (a.contains("network")) {
        auto net = network_status_from_json(a.at("network"));
        if (!net) return std::unexpected(net.error());
        if (auto st = set_network_status(*id, *net); !st) return st;
      }
      for (const auto& w : a.value("services", json::array())) {
        RegisterServicesOptions o;
        o.task = w.value("task", "");
        o.canary = w.value("canary", false);
        o.alloc_address = w.value("alloc_address", "");
        if (auto ids = register_services(*id, o); !ids) return std::unexpected(ids.error());
      }
      if (a.contains("client_status")) {
        auto st = set_client_status(*id, a.at("client_status").get<std::string>());
        if (!st) return st;
      }
    }
  } catch (const json::exception& e) {
    return http_fail(std::string("bad scenario: ") + e.what(), 400);
  }
  return {};
}

}  // namespace cn::fakes
