#include "labeler/services/node_report.h"

#include <nlohmann/json.hpp>

#include "common/util/json_read.h"

namespace cn::labeler {

InstanceHealth service_health(const std::vector<nomad::CheckResult>& checks,
                              std::string_view service_name) {
  const nomad::CheckResult* pending = nullptr;
  for (const auto& c : checks) {
    if (c.service != service_name) continue;
    if (c.status == nomad::CheckStatus::failure) {
      return {BackendState::not_ready, "check " + c.check + ": failure"};
    }
    if (c.status == nomad::CheckStatus::pending && pending == nullptr) pending = &c;
  }
  if (pending != nullptr) return {BackendState::not_ready, "check " + pending->check + ": pending"};
  return {BackendState::ready, ""};
}

InstanceReport instance_report(const nomad::Allocation& alloc,
                               const std::vector<std::string>& service_names,
                               const std::vector<nomad::CheckResult>& checks) {
  InstanceReport r;
  for (const auto& name : service_names) r.services[name] = service_health(checks, name);
  for (const auto& p : alloc.ports) {
    r.ports[p.label] = p.to > 0 ? p.to : p.value;
    if (r.host_address.empty()) r.host_address = p.host_ip;
  }
  r.alloc_address = std::string(alloc.address());
  return r;
}

std::map<std::string, std::string> encode_node_report(const NodeReport& report) {
  std::map<std::string, std::string> items;
  for (const auto& [alloc_id, instance] : report) {
    nlohmann::json services = nlohmann::json::object();
    for (const auto& [name, health] : instance.services) {
      services[name] = health.state == BackendState::ready ? "" : health.reason;
    }
    nlohmann::json ports = nlohmann::json::object();
    for (const auto& [label, port] : instance.ports) ports[label] = port;
    items[alloc_id] = nlohmann::json{{"s", services},
                                     {"p", ports},
                                     {"a", instance.alloc_address},
                                     {"h", instance.host_address}}
                          .dump();
  }
  return items;
}

NodeReport decode_node_report(const std::map<std::string, std::string>& items) {
  NodeReport report;
  for (const auto& [alloc_id, text] : items) {
    auto doc = json::parse_json_text(text, "node report item");
    if (!doc || !doc->is_object()) continue;
    json::JsonReader r(*doc, "node report item");
    std::map<std::string, std::string> services;
    r.read("s", services);
    InstanceReport instance;
    r.read("a", instance.alloc_address);
    r.read("h", instance.host_address);
    if (const auto* ports = r.object("p")) {
      for (const auto& [label, value] : ports->items()) {
        auto port = json::integer_in_range(value, 0, 65535);
        if (!port) {
          r.fail_at("p", port.error());
          break;
        }
        instance.ports[label] = *port;
      }
    }
    if (!r.ok()) continue;
    for (auto& [name, why] : services) {
      const bool ready = why.empty();
      instance.services[name] = {ready ? BackendState::ready : BackendState::not_ready,
                                 std::move(why)};
    }
    report[alloc_id] = std::move(instance);
  }
  return report;
}

void add_node_report(const NodeReport& report, CatalogInput& input) {
  for (const auto& [alloc_id, instance] : report) {
    for (const auto& [name, health] : instance.services) {
      input.health[instance_health_key(alloc_id, name)] = health;
    }
    auto [it, fresh] = input.allocations.try_emplace(alloc_id);
    if (!fresh) continue;
    nomad::Allocation& a = it->second;
    a.id = alloc_id;
    // A node reports only allocations that still have registrations on it.
    a.client_status = "running";
    a.desired_status = "run";
    if (!instance.alloc_address.empty()) {
      a.network_status = nomad::NetworkStatus{{}, instance.alloc_address, {}};
    }
    for (const auto& [label, port] : instance.ports) {
      a.ports.push_back({label, 0, port, instance.host_address});
    }
  }
}

}  // namespace cn::labeler
