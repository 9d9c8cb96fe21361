#include "labeler/services/lb_service_check.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <tuple>

#include "common/policy/policy_syntax.h"

namespace cn::labeler {

namespace {

bool is_alnum(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0;
}

using Endpoint = std::tuple<std::array<std::uint8_t, 16>, bool, std::uint32_t, LbProtocol>;

Endpoint endpoint_of(const IpPrefix& address, const LbPort& port) {
  return {address.addr, address.v6, port.port, port.protocol};
}

std::string endpoint_text(const IpPrefix& address, const LbPort& port) {
  std::string ip = ip_text(address);
  if (address.v6) ip = "[" + ip + "]";
  return ip + ":" + std::to_string(port.port) + "/" + std::string(to_string(port.protocol));
}

bool special_address(const IpPrefix& a) {
  if (!a.v6) {
    return a.addr[0] == 0 || a.addr[0] == 127 || (a.addr[0] >= 224 && a.addr[0] <= 239) ||
           (a.addr[0] == 255 && a.addr[1] == 255 && a.addr[2] == 255 && a.addr[3] == 255);
  }
  const bool zero_head =
      std::all_of(a.addr.begin(), a.addr.begin() + 15, [](std::uint8_t b) { return b == 0; });
  const bool unspecified_or_loopback = zero_head && (a.addr[15] == 0 || a.addr[15] == 1);
  return unspecified_or_loopback || a.addr[0] == 0xff;
}

// The service-wide checks: name, namespace, ports. Empty when the service may be served.
std::string service_problem(LbService& s) {
  if (!is_nomad_service_name(s.name)) {
    return "service name \"" + s.name + "\" is not an RFC 1123 label of 1 to 63 characters";
  }
  if (!cn::policy::is_nomad_namespace(s.nomad_namespace)) {
    return "namespace \"" + s.nomad_namespace + "\" is not a Nomad namespace name";
  }
  if (s.vip.bits != s.vip.address_bits()) return "no virtual IP";
  if (s.ports.empty()) return "no port to serve";
  std::set<std::string> names;
  std::set<std::pair<std::uint32_t, LbProtocol>> numbers;
  for (const auto& p : s.ports) {
    if (p.port == 0 || p.port > 65535) {
      return "port " + p.name + " is " + std::to_string(p.port) + ", outside 1..65535";
    }
    if (!names.insert(p.name).second) return "port label \"" + p.name + "\" appears twice";
    if (!numbers.insert({p.port, p.protocol}).second) {
      return "port " + std::to_string(p.port) + "/" + std::string(to_string(p.protocol)) +
             " appears twice";
    }
  }
  // With several ports an unnamed one would match the backends of every frontend port.
  if (s.ports.size() > 1 && names.contains("")) return "a port without a label among several";
  return {};
}

std::string backend_problem(const LbService& s, const LbBackend& b, const LbCheckOptions& options) {
  if (b.address.bits != b.address.address_bits()) return "address is not an IP address";
  if (b.address.v6 != s.vip.v6) {
    return "address " + ip_text(b.address) + " is not of the virtual IP's family";
  }
  if (special_address(b.address)) {
    return "address " + ip_text(b.address) + " is unspecified, loopback, multicast or broadcast";
  }
  for (const auto& range : options.vip_ranges) {
    if (prefix_contains(range, b.address)) {
      return "address " + ip_text(b.address) + " lies in the virtual IP range";
    }
  }
  if (b.ports.empty()) return "no port";
  for (const auto& p : b.ports) {
    if (p.port == 0 || p.port > 65535) {
      return "port " + p.name + " is " + std::to_string(p.port) + ", outside 1..65535";
    }
    const bool served = std::ranges::any_of(
        s.ports, [&](const LbPort& f) { return f.name == p.name && f.protocol == p.protocol; });
    if (!served) return "port label \"" + p.name + "\" is not one of the service's ports";
  }
  return {};
}

}  // namespace

bool is_nomad_service_name(std::string_view name) {
  if (name.empty() || name.size() > 63) return false;
  if (!is_alnum(name.front()) || !is_alnum(name.back())) return false;
  return std::ranges::all_of(name, [](char c) { return is_alnum(c) || c == '-'; });
}

LbCheckResult check_lb_services(std::vector<LbService> candidates, const LbCheckOptions& options) {
  std::ranges::sort(candidates, [](const LbService& a, const LbService& b) {
    return std::tie(a.nomad_namespace, a.name) < std::tie(b.nomad_namespace, b.name);
  });
  LbCheckResult out;
  std::map<Endpoint, std::string> frontends;  // VIP:port/proto -> "<ns>/<name>"
  std::map<Endpoint, std::string> backends;   // address:port/proto -> "<ns>/<name>"
  for (auto& s : candidates) {
    const std::string id = s.nomad_namespace + "/" + s.name;
    auto problem = service_problem(s);
    if (problem.empty()) {
      for (const auto& p : s.ports) {
        auto it = frontends.find(endpoint_of(s.vip, p));
        if (it != frontends.end()) {
          problem = "frontend " + endpoint_text(s.vip, p) + " is already " + it->second + "'s";
          break;
        }
      }
    }
    if (!problem.empty()) {
      out.problems.push_back({s.nomad_namespace, s.name, {}, std::move(problem)});
      continue;
    }
    for (const auto& p : s.ports) frontends.emplace(endpoint_of(s.vip, p), id);

    std::ranges::sort(s.backends, {}, &LbBackend::alloc_id);
    std::vector<LbBackend> kept;
    for (auto& b : s.backends) {
      auto why = backend_problem(s, b, options);
      if (why.empty() && !options.shared_backends_safe) {
        for (const auto& p : b.ports) {
          auto it = backends.find(endpoint_of(b.address, p));
          if (it != backends.end() && it->second != id) {
            why = endpoint_text(b.address, p) + " is already a backend of " + it->second +
                  " (agents before 1.19.5 cannot remove a backend two services share, "
                  "cilium/cilium#46493)";
            break;
          }
        }
      }
      if (!why.empty()) {
        out.problems.push_back({s.nomad_namespace, s.name, b.alloc_id, std::move(why)});
        continue;
      }
      for (const auto& p : b.ports) backends.emplace(endpoint_of(b.address, p), id);
      kept.push_back(std::move(b));
    }
    s.backends = std::move(kept);
    out.services.push_back(std::move(s));
  }
  return out;
}

}  // namespace cn::labeler
