#include "labeler/services/service_catalog.h"

#include <algorithm>
#include <tuple>

#include "labeler/services/vip_table.h"

namespace cn::labeler {

namespace {

using nomad::Allocation;
using nomad::ServiceRegistration;

const nomad::AllocPort* port_of(const Allocation* alloc, const std::string& label) {
  if (alloc == nullptr) return nullptr;
  auto it = std::ranges::find(alloc->ports, label, &nomad::AllocPort::label);
  return it == alloc->ports.end() ? nullptr : &*it;
}

AddressMode mode_of(const ServiceRegistration& r, const Allocation* alloc,
                    const nomad::AllocPort* port) {
  if (alloc == nullptr) return AddressMode::unknown;
  if (!alloc->address().empty() && r.address == alloc->address()) return AddressMode::alloc;
  if (port != nullptr && r.address == port->host_ip) return AddressMode::host;
  return AddressMode::other;
}

// The port clients use on the VIP for one label: the port inside the allocation (`to`) when the
// job gives one, the same on every instance even when host ports are dynamic; else the port
// Nomad registered.
std::int64_t frontend_port_of(const ServiceRegistration& r, const nomad::AllocPort* port) {
  if (port != nullptr && port->to > 0) return port->to;
  if (port != nullptr && port->value > 0) return port->value;
  return r.port;
}

// Most instances decide a label's frontend port; a tie goes to the lowest, so every node picks
// the same.
std::int64_t agreed_port(const std::map<std::int64_t, int>& votes) {
  std::int64_t best = 0;
  int count = 0;
  for (const auto& [port, n] : votes) {
    if (n > count) {
      best = port;
      count = n;
    }
  }
  return best;
}

std::uint32_t as_port(std::int64_t v) {
  // Out of range becomes 0, which the gate reports as outside 1..65535 with the label.
  return v > 0 && v <= 65535 ? static_cast<std::uint32_t>(v) : 0;
}

}  // namespace

std::string_view to_string(AddressMode mode) {
  switch (mode) {
    case AddressMode::alloc:
      return "alloc";
    case AddressMode::host:
      return "host";
    case AddressMode::other:
      return "other";
    case AddressMode::unknown:
      return "unknown";
  }
  return "unknown";
}

std::string instance_health_key(std::string_view alloc_id, std::string_view service_name) {
  std::string key(alloc_id);
  key += '/';
  key += service_name;
  return key;
}

std::string port_label_of(const ServiceRegistration& registration) {
  const std::string marker = "-" + registration.service_name + "-";
  const auto at = registration.id.rfind(marker);
  if (at == std::string::npos) return {};
  return registration.id.substr(at + marker.size());
}

Catalog build_catalog(const CatalogInput& input) {
  // (namespace, service) -> its registrations, in a stable order.
  std::map<std::pair<std::string, std::string>, std::vector<const ServiceRegistration*>> grouped;
  for (const auto& r : input.registrations) {
    grouped[{r.nomad_namespace, r.service_name}].push_back(&r);
  }
  Catalog out;
  for (auto& [id, regs] : grouped) {
    const auto& [ns, name] = id;
    std::ranges::sort(regs, {}, &ServiceRegistration::id);
    CatalogService described{ns, name, {}};
    LbService svc;
    svc.nomad_namespace = ns;
    svc.name = name;

    std::map<std::string, std::map<std::int64_t, int>> votes;  // label -> port -> instances
    std::map<std::string, LbBackend> by_alloc;
    for (const ServiceRegistration* r : regs) {
      auto alloc_it = input.allocations.find(r->alloc_id);
      const Allocation* alloc = alloc_it == input.allocations.end() ? nullptr : &alloc_it->second;
      const std::string label = port_label_of(*r);
      const nomad::AllocPort* port = port_of(alloc, label);
      ++described.modes[mode_of(*r, alloc, port)];
      // Nomad removes it soon; no new connections meanwhile.
      if (alloc != nullptr && alloc->is_terminal()) continue;
      ++votes[label][frontend_port_of(*r, port)];

      auto address = parse_ip_address(r->address);
      if (!address) {
        out.problems.push_back(
            {ns, name, r->alloc_id, "address \"" + r->address + "\" is not an IP address"});
        continue;
      }
      auto [it, fresh] = by_alloc.try_emplace(r->alloc_id);
      LbBackend& b = it->second;
      if (fresh) {
        b.alloc_id = r->alloc_id;
        b.address = *address;
        auto h = input.health.find(instance_health_key(r->alloc_id, name));
        if (h == input.health.end()) {
          b.state = BackendState::not_ready;
          b.state_reason = "no check results from its node yet";
        } else {
          b.state = h->second.state;
          b.state_reason = h->second.reason;
        }
      } else if (b.address != *address) {
        out.problems.push_back({ns, name, r->alloc_id,
                                "registers two addresses, " + ip_text(b.address) + " and " +
                                    r->address + ": only the first is served"});
        continue;
      }
      b.ports.push_back({label, as_port(r->port), LbProtocol::tcp});
    }
    out.described.push_back(std::move(described));

    auto vip = input.vips.find(vip_service_key(ns, name));
    if (vip == input.vips.end()) {
      out.problems.push_back({ns, name, {}, "no virtual IP assigned yet"});
      continue;
    }
    svc.vip = vip->second;
    for (const auto& [label, port_votes] : votes) {
      svc.ports.push_back({label, as_port(agreed_port(port_votes)), LbProtocol::tcp});
    }
    for (auto& [alloc_id, b] : by_alloc) svc.backends.push_back(std::move(b));
    if (svc.ports.empty()) {
      out.problems.push_back({ns, name, {}, "no instance is running"});
      continue;
    }
    out.services.push_back(std::move(svc));
  }
  return out;
}

}  // namespace cn::labeler
