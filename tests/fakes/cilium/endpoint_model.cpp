#include "tests/fakes/cilium/endpoint_model.h"

#include <ctime>

#include "tests/fakes/cilium/endpoint_options.h"

namespace cn::fakes::cilium {

using nlohmann::json;

namespace {

void put(json& j, const char* key, const std::string& v) {
  if (!v.empty()) j[key] = v;
}
void put(json& j, const char* key, std::int64_t v) {
  if (v != 0) j[key] = v;
}
void put(json& j, const char* key, const std::vector<std::string>& v) {
  if (!v.empty()) j[key] = v;
}

// What the endpoint holds, over the defaults for an endpoint made before options were kept.
json mutable_options(const FakeEndpoint& ep) {
  json out = json::object();
  for (const auto& [name, value] : default_endpoint_options(false)) out[name] = value;
  for (const auto& [name, value] : ep.options) out[name] = value;
  return out;
}

json label_spec(const LabelMap& custom) {
  json j = json::object();  // a present pointer with nothing set prints as {}
  put(j, "user", labels_to_model(custom));
  return j;
}

json label_status(const OpLabels& l) {
  json j = json::object();
  j["realized"] = label_spec(l.custom);
  put(j, "security-relevant", labels_to_model(l.orchestration_identity));
  put(j, "derived", labels_to_model(l.orchestration_info));
  put(j, "disabled", labels_to_model(l.disabled));
  return j;
}

json external_identifiers(const FakeEndpoint& ep) {
  json j = json::object();
  put(j, "cni-attachment-id", ep.cni_attachment_id());
  if (!ep.disable_legacy_identifiers) {
    put(j, "container-id", ep.container_id);
    put(j, "container-name", ep.container_name);
    put(j, "docker-endpoint-id", ep.docker_endpoint_id);
    put(j, "docker-network-id", ep.docker_network_id);
    // namespace + "/" + pod, so "/" for every non-Kubernetes endpoint
    j["pod-name"] = ep.k8s_namespace + "/" + ep.k8s_pod_name;
    put(j, "k8s-pod-name", ep.k8s_pod_name);
    put(j, "k8s-namespace", ep.k8s_namespace);
  }
  return j;
}

json policy_json(const FakeEndpoint& ep, std::uint64_t revision) {
  json p = json::object();
  put(p, "id", static_cast<std::int64_t>(ep.identity ? ep.identity->id : 0));
  // Endpoint.policyStatus (pkg/endpoint/api.go): audit renames an enforcing direction; an
  // endpoint nothing enforces on stays "none" in audit too.
  std::string enabled = ep.policy_enforcement;
  const auto audit = ep.options.find("PolicyAuditMode");
  if (audit != ep.options.end() && audit->second == "Enabled" && enabled != "none") {
    enabled = "audit-" + enabled;
  }
  p["policy-enabled"] = enabled;
  put(p, "build", static_cast<std::int64_t>(ep.regenerations));
  put(p, "policy-revision", static_cast<std::int64_t>(revision));
  p["allowed-ingress-identities"] = json::array({0});
  p["allowed-egress-identities"] = json::array({0});
  p["cidr-policy"] = json::object();
  p["l4"] = json::object();
  return p;
}

}  // namespace

std::string go_json(const json& j) {
  return j.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
}

std::string rfc3339_seconds(WallTime t) {
  const std::time_t secs = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

json identity_json(const Identity& ident) {
  json j = json::object();
  put(j, "id", static_cast<std::int64_t>(ident.id));
  put(j, "labels", ident.labels);
  put(j, "labelsSHA256", ident.labels_sha256);
  return j;
}

json endpoint_health_json(const FakeEndpoint& ep) {
  const std::string h = ep.health;
  json j{{"bpf", h}, {"overallHealth", h}, {"policy", h}};
  if (h != "Failure" && h != "Disabled") j["connected"] = true;  // false is omitted
  return j;
}

json label_configuration_json(const FakeEndpoint& ep) {
  return json{{"spec", label_spec(ep.labels.custom)}, {"status", label_status(ep.labels)}};
}

json endpoint_log_json(const FakeEndpoint& ep) {
  json arr = json::array();
  for (const auto& e : ep.log) {
    json j = json::object();
    j["code"] = e.code;
    put(j, "message", e.message);
    j["state"] = e.state;
    j["timestamp"] = rfc3339_seconds(e.when);
    arr.push_back(std::move(j));
  }
  return arr;
}

json endpoint_config_status_json(const FakeEndpoint& ep) {
  // `immutable` is a map: Go omits it when empty, and the fake has no immutable options.
  return json{
      {"realized",
       {{"label-configuration", label_spec(ep.labels.custom)}, {"options", mutable_options(ep)}}}};
}

json endpoint_json(const FakeEndpoint& ep, const ModelContext& ctx) {
  json status = json::object();
  if (ep.regenerations > 0 || ep.identity) {
    json ctrl_status = {
        {"consecutive-failure-count", 0},
        {"failure-count", 0},
        {"last-failure-timestamp", "0001-01-01T00:00:00.000Z"},
        {"last-success-timestamp", rfc3339(ep.last_identity_resolution)},
        {"success-count", static_cast<std::int64_t>(std::max<std::uint64_t>(1, ep.regenerations))},
    };
    status["controllers"] = json::array({json{
        {"configuration", {{"error-retry", true}, {"interval", "5m0s"}}},
        {"name", "resolve-identity-" + std::to_string(ep.id)},
        {"status", ctrl_status},
        {"uuid", ep.controller_uuid},
    }});
  }
  status["external-identifiers"] = external_identifiers(ep);
  status["health"] = endpoint_health_json(ep);
  if (ep.identity) status["identity"] = identity_json(*ep.identity);
  status["labels"] = label_status(ep.labels);
  if (!ep.log.empty()) {
    json last = endpoint_log_json(ep).back();
    status["log"] = json::array({last});
  }

  json addr = json::object();
  put(addr, "ipv4", ep.ipv4);
  put(addr, "ipv4-expiration-uuid", ep.ipv4_expiration_uuid);
  put(addr, "ipv4-pool-name", ep.ipv4_pool);
  put(addr, "ipv6", ep.ipv6);
  put(addr, "ipv6-expiration-uuid", ep.ipv6_expiration_uuid);
  put(addr, "ipv6-pool-name", ep.ipv6_pool);
  json net = json::object();
  net["addressing"] = json::array({addr});
  put(net, "container-interface-name", ep.container_interface_name);
  put(net, "host-mac", ep.host_mac);
  put(net, "interface-index", ep.interface_index);
  put(net, "interface-name", ep.interface_name);
  put(net, "mac", ep.mac);
  status["networking"] = net;

  const json pol = policy_json(ep, ctx.policy_revision);
  status["policy"] = {{"proxy-policy-revision", static_cast<std::int64_t>(ctx.policy_revision)},
                      {"realized", pol},
                      {"spec", pol}};
  status["realized"] = {{"label-configuration", label_spec(ep.labels.custom)},
                        {"options", mutable_options(ep)}};
  status["state"] = ep.state;

  return json{
      {"id", ep.id},
      {"spec",
       {{"label-configuration", label_spec(ep.labels.custom)}, {"options", mutable_options(ep)}}},
      {"status", status}};
}

json daemon_config_json(const DaemonView& view) {
  json addressing = json::object();
  json v4 = json::object();
  v4["enabled"] = true;
  put(v4, "ip", view.ipv4_router_ip);
  put(v4, "alloc-range", view.ipv4_alloc_range);
  addressing["ipv4"] = v4;
  json v6 = json::object();
  if (!view.ipv6_alloc_range.empty()) {
    v6["enabled"] = true;
    put(v6, "ip", view.ipv6_router_ip);
    put(v6, "alloc-range", view.ipv6_alloc_range);
  }
  addressing["ipv6"] = v6;  // disabled family: a present, empty element
  json daemon_options = json::object();
  for (const auto& [name, value] : default_endpoint_options(view.policy_audit_mode))
    daemon_options[name] = value;
  const json realized = {{"options", daemon_options}, {"policy-enforcement", "default"}};
  json out = json{{"spec", realized},
                  {"status",
                   {{"addressing", addressing},
                    {"datapathMode", "veth"},
                    {"deviceMTU", 1500},
                    {"routeMTU", 1500},
                    {"ipam-mode", "cluster-pool"},
                    {"masquerade", true},
                    {"masqueradeProtocols", {{"ipv4", true}}},
                    {"realized", realized},
                    {"kvstoreConfiguration", json::object()},
                    {"nodeMonitor", {{"cpus", 2}, {"npages", 64}, {"pagesize", 4096}}}}}};
  if (view.options) {
    // option.Config by Go field name (daemon/cmd/config.go, getConfigHandler): a few of its
    // fields, values of every JSON type as the real map has them.
    out["status"]["daemonConfigurationMap"] = {
        {"EnableNodeSelectorLabels", view.options->enable_node_selector_labels},
        {"EnableL7Proxy", view.options->enable_l7_proxy},
        {"EnableICMPRules", view.options->enable_icmp_rules},
        {"EnableHostFirewall", view.options->enable_host_firewall},
        {"PolicyAuditMode", view.policy_audit_mode},
        {"EnablePolicy", "default"},
        {"Devices", json::array({"eth0"})},
        {"MTU", 0}};
  }
  return out;
}

json healthz_json(const DaemonView& view, bool brief) {
  json cilium = {{"state", view.cilium_state}};
  put(cilium, "msg", view.cilium_msg.empty() ? view.version_text : view.cilium_msg);
  if (brief) return json{{"cilium", cilium}};
  return json{
      {"cilium", cilium},
      {"container-runtime", {{"state", "Disabled"}}},
      {"kubernetes", {{"state", "Disabled"}}},
      {"kvstore", {{"state", "Disabled"}}},
      {"datapath-mode", "veth"},
      {"attach-mode", "tcx"},
      {"ipam", {{"ipv4", view.allocated_ipv4}, {"status", "ok"}}},
      {"nodeMonitor", {{"cpus", 2}, {"npages", 64}, {"pagesize", 4096}}},
      // GetAbsoluteNodeName: "<cluster>/<node>", the bare node name for cluster "default" or "".
      {"cluster",
       {{"ciliumHealth", {{"state", "Ok"}}},
        {"self", view.cluster_name.empty() || view.cluster_name == "default"
                     ? std::string("fake-node")
                     : view.cluster_name + "/fake-node"}}},
      {"masquerading", {{"enabled", true}, {"mode", "BPF"}}},
      {"cni-chaining", {{"mode", "none"}}},
  };
}

}  // namespace cn::fakes::cilium
