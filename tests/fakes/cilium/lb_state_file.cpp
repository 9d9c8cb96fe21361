#include "tests/fakes/cilium/lb_state_file.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>

#include "tests/fakes/cilium/lb_state_decode.h"

namespace cn::fakes::cilium {

using nlohmann::json;

Result<LbFileFormat> lb_state_file_format(const std::string& path) {
  auto ends_with = [&](std::string_view s) { return path.ends_with(s); };
  if (ends_with(".json")) return LbFileFormat::json_file;
  if (ends_with(".yaml") || ends_with(".yml")) return LbFileFormat::yaml_file;
  return fail("could not deduce file format from \"" + path + "\", expected .json or .yaml suffix");
}

// Named, not anonymous: the unity build puts several sources in one translation unit.
namespace lb_file_impl {

using namespace lbdoc;

// writer.go's frontend conflict: the whole transaction is aborted.
struct LbConflict : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// 4 or 6 when `text` is an IP address, 0 otherwise.
int lb_ip_family(const std::string& text) {
  unsigned char buf[16];
  if (inet_pton(AF_INET, text.c_str(), buf) == 1) return 4;
  if (inet_pton(AF_INET6, text.c_str(), buf) == 1) return 6;
  return 0;
}

// The address as netip prints it, so "FD00:0::1" and "fd00::1" are one frontend or backend.
std::string canonical_ip(const std::string& text) {
  unsigned char buf[16];
  char out[INET6_ADDRSTRLEN];
  const int af = lb_ip_family(text) == 6 ? AF_INET6 : AF_INET;
  if (inet_pton(af, text.c_str(), buf) != 1) return text;
  return inet_ntop(af, buf, out, sizeof out) ? std::string(out) : text;
}

// pkg/k8s/endpoints.go and conversions.go convertEndpoints: the backend state of one endpoint's
// conditions, nullopt when the release drops it.
std::optional<std::string> backend_state(const SliceEndpoint& ep, const LbEmulation& em) {
  const bool ready = ep.ready.value_or(true);
  const bool terminating = ep.terminating.value_or(false);
  const bool old = em.minor == 18 && em.patch <= 4;
  // Up to 1.18.4 a missing serving condition took ready's value.
  const bool serving = ep.serving.value_or(old ? ready : true);
  if (ready) return "active";
  if (old) {
    if (terminating) return serving ? std::optional<std::string>("terminating") : std::nullopt;
    return serving ? std::optional<std::string>("active") : std::nullopt;
  }
  if (terminating) return serving ? "terminating" : "terminating-not-serving";
  return "maintenance";
}

// 1.20's service.cilium.io/weight on the slice (PR cilium/cilium#46061); nullopt: ignored.
std::optional<std::uint16_t> slice_weight(const Slice& s, const LbEmulation& em) {
  if (em.minor < 20) return std::nullopt;
  auto it = s.meta.annotations.find("service.cilium.io/weight");
  if (it == s.meta.annotations.end() || it->second.empty()) return std::nullopt;
  if (!std::all_of(it->second.begin(), it->second.end(),
                   [](unsigned char c) { return std::isdigit(c); }) ||
      it->second.size() > 5) {
    return std::nullopt;
  }
  const int w = std::stoi(it->second);
  if (w > 65535) return std::nullopt;
  return static_cast<std::uint16_t>(w);
}

bool family_enabled(int family, const LbEmulation& em) {
  return (family == 4 && em.ipv4) || (family == 6 && em.ipv6);
}

void add_backends(const Slice& s, const LbEmulation& em,
                  std::map<std::string, std::map<std::string, LbBackend>>& by_service) {
  if (s.address_type != "IPv4" && s.address_type != "IPv6") return;
  const std::string service = s.meta.namespace_ + "/" +
                              (s.meta.labels.contains("kubernetes.io/service-name")
                                   ? s.meta.labels.at("kubernetes.io/service-name")
                                   : std::string());
  auto& backends = by_service[service];
  const auto weight = slice_weight(s, em);
  for (const auto& ep : s.endpoints) {
    auto state = backend_state(ep, em);
    if (!state) continue;
    for (const auto& addr : ep.addresses) {
      const int family = lb_ip_family(addr);
      if (family == 0 || !family_enabled(family, em)) continue;
      for (const auto& p : s.ports) {
        const std::string proto = p.protocol.value_or("TCP");
        if (proto != "TCP" && proto != "UDP" && proto != "SCTP") continue;
        if (!p.port) continue;
        LbBackend be;
        be.address = canonical_ip(addr);
        be.port = static_cast<std::uint16_t>(*p.port);
        be.protocol = proto;
        be.state = *state;
        be.node_name = ep.node_name;
        be.zone = ep.zone;
        be.ipv6 = family == 6;
        if (weight) {
          be.weight = *weight;
          if (*weight == 0) be.state = "maintenance";
        }
        const std::string key = be.address + "|" + std::to_string(be.port) + "|" + proto;
        auto& slot = backends[key];
        std::set<std::string> names = slot.port_names;
        if (p.name && !p.name->empty()) names.insert(*p.name);
        // The same address again: the later occurrence wins, its port names accumulate.
        slot = std::move(be);
        slot.port_names = std::move(names);
      }
    }
  }
}

// getIPFamilies: ipFamilies as written (unknown names make nothing), else deduced from the
// cluster IPs, but only when spec.clusterIP is set and not None. An address that does not
// parse counts as IPv4. In the 1.19.0 source a deduced IPv6 family comes out as IPv4 (fixed by
// 1.19.5); the fake assumes 1.19.1-1.19.4 have it too.
std::vector<int> node_port_families(const Service& s, const LbEmulation& em) {
  std::vector<int> out;
  if (!s.ip_families.empty()) {
    for (const auto& f : s.ip_families) {
      if (f == "IPv4") out.push_back(4);
      if (f == "IPv6") out.push_back(6);
    }
    return out;
  }
  if (s.cluster_ip.empty() || s.cluster_ip == "None") return out;
  bool v4 = false;
  bool v6 = false;
  for (const auto& ip :
       s.cluster_ips.empty() ? std::vector<std::string>{s.cluster_ip} : s.cluster_ips) {
    (lb_ip_family(ip) == 6 ? v6 : v4) = true;
  }
  if (v4) out.push_back(4);
  if (v6) out.push_back(em.minor == 19 && em.patch <= 4 ? 4 : 6);
  return out;
}

void derive_frontends(const Service& s, const LbEmulation& em, std::vector<LbFrontend>& out) {
  const std::string name = s.meta.namespace_ + "/" + s.meta.name;
  std::string lowered_ip = s.cluster_ip;
  std::transform(lowered_ip.begin(), lowered_ip.end(), lowered_ip.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  const bool headless =
      lowered_ip == "none" || s.meta.labels.contains("service.kubernetes.io/headless");
  const bool two_scopes = (s.ext_policy == "Local") != (s.int_policy == "Local");
  // 1.18 exposes LoadBalancer and ExternalIPs only with kube-proxy replacement; 1.19 dropped
  // that gate (reflectors/conversions.go).
  const bool lb_gate = em.minor >= 19 || em.kube_proxy_replacement;
  // `scoped`: NodePort and LoadBalancer frontends come twice when exactly one traffic policy
  // is Local, once per scope.
  auto emit = [&](const std::string& addr, int family, const std::string& type, bool scoped) {
    if (!family_enabled(family, em)) return;
    for (const auto& p : s.ports) {
      const bool node_port = type == "NodePort";
      if (node_port && p.node_port == 0) continue;
      for (const char* scope : {"external", "internal"}) {
        if (std::string_view(scope) == "internal" && !(scoped && two_scopes)) continue;
        LbFrontend fe;
        fe.address = canonical_ip(addr);
        // Cast without a range check, as upstream does.
        fe.port = static_cast<std::uint16_t>(node_port ? p.node_port : p.port);
        fe.protocol = p.protocol;
        fe.type = type;
        fe.scope = scope;
        fe.port_name = p.name;
        fe.service = name;
        fe.ipv6 = family == 6;
        out.push_back(std::move(fe));
      }
    }
  };
  // A headless Service has no frontends at all, whatever its type or addresses.
  if (headless) return;
  std::vector<std::string> cluster_ips = s.cluster_ips;
  if (cluster_ips.empty()) cluster_ips.push_back(s.cluster_ip);
  std::sort(cluster_ips.begin(), cluster_ips.end());  // slices.Sorted: by string
  // ClusterIP frontends exist without kube-proxy replacement too.
  for (const auto& ip : cluster_ips) {
    if (int f = lb_ip_family(ip)) emit(ip, f, "ClusterIP", false);
  }
  if (em.kube_proxy_replacement && (s.type == "NodePort" || s.type == "LoadBalancer")) {
    for (int f : node_port_families(s, em)) emit(f == 4 ? "0.0.0.0" : "::", f, "NodePort", true);
  }
  if (lb_gate && s.type == "LoadBalancer") {
    for (const auto& ing : s.ingress) {
      if (ing.ip_mode && *ing.ip_mode != "VIP") continue;
      if (int f = lb_ip_family(ing.ip)) emit(ing.ip, f, "LoadBalancer", true);
    }
  }
  if (lb_gate) {
    for (const auto& ip : s.external_ips) {
      if (int f = lb_ip_family(ip)) emit(ip, f, "ExternalIPs", false);
    }
  }
}

// writer/writer.go DefaultSelectBackends.
std::vector<LbBackend> select_backends(const LbFrontend& fe, const LbService& svc,
                                       const LbEmulation& em) {
  const bool internal = fe.type == "ClusterIP" || fe.scope == "internal";
  const bool local = (internal ? svc.int_traffic_policy : svc.ext_traffic_policy) == "Local";
  std::vector<LbBackend> out;
  for (const auto& be : svc.backends) {
    if (be.protocol != fe.protocol || be.ipv6 != fe.ipv6) continue;
    if (!fe.port_name.empty() && !be.port_names.empty() && !be.port_names.contains(fe.port_name))
      continue;
    if (local && !be.node_name.empty() && be.node_name != em.node_name) continue;
    out.push_back(be);
  }
  return out;
}

LbTable build_table(const std::vector<Service>& services, const std::vector<Slice>& slices,
                    const LbEmulation& em) {
  std::map<std::string, std::map<std::string, LbBackend>> backends;
  for (const auto& sl : slices) add_backends(sl, em, backends);
  LbTable table;
  table.slice_count = slices.size();
  std::map<std::string, LbService> by_name;
  std::map<std::string, std::vector<LbFrontend>> fronts;
  std::map<std::string, std::string> owner;  // frontend key -> service, in file order
  for (const auto& s : services) {
    LbService svc;
    svc.name = s.meta.namespace_ + "/" + s.meta.name;
    // Only the exact "Local" is Local; anything else is Cluster.
    svc.ext_traffic_policy = s.ext_policy == "Local" ? "Local" : "Cluster";
    svc.int_traffic_policy = s.int_policy == "Local" ? "Local" : "Cluster";
    svc.session_affinity = s.session_affinity == "ClientIP";
    if (svc.session_affinity) {
      const std::int32_t t = s.affinity_timeout.value_or(0);
      svc.session_affinity_timeout_s = t != 0 ? static_cast<std::uint32_t>(t) : 10800;
    }
    svc.labels = s.meta.labels;
    svc.annotations = s.meta.annotations;
    std::vector<LbFrontend> fes;
    derive_frontends(s, em, fes);
    ++table.service_entries;
    table.derived_frontends += fes.size();
    // writer.go validateFrontends: the services before this one in the file own their
    // frontends; the whole transaction fails on the first conflict.
    for (const auto& fe : fes) {
      auto it = owner.find(fe.key());
      if (it != owner.end() && it->second != svc.name) {
        // validateFrontends wraps ErrFrontendConflict; L3n4Addr marks the internal scope "/i".
        throw LbConflict(
            "failed to upsert services and frontends: frontend already owned by another "
            "service: " +
            fe.address + ":" + std::to_string(fe.port) + "/" + fe.protocol +
            (fe.scope == "internal" ? "/i" : "") + " is owned by " + it->second);
      }
    }
    // A later entry of the same name replaces the earlier one and its frontends.
    for (const auto& old : fronts[svc.name]) owner.erase(old.key());
    std::vector<LbFrontend> unique;
    for (auto& fe : fes) {
      if (owner.emplace(fe.key(), svc.name).second) unique.push_back(std::move(fe));
    }
    fronts[svc.name] = std::move(unique);
    by_name[svc.name] = std::move(svc);
  }
  for (auto& [name, svc] : by_name) {
    if (auto it = backends.find(name); it != backends.end()) {
      for (auto& [key, be] : it->second) svc.backends.push_back(be);
    }
    for (auto& fe : fronts[name]) {
      fe.backends = select_backends(fe, svc, em);
      table.frontends.push_back(std::move(fe));
    }
    table.services.push_back(std::move(svc));
  }
  return table;
}

}  // namespace lb_file_impl

std::vector<LbBackend> select_lb_backends(const LbFrontend& fe, const LbService& svc,
                                          const LbEmulation& emulation) {
  return lb_file_impl::select_backends(fe, svc, emulation);
}

bool lb_keeps_stale_shared_backends(const LbEmulation& em) {
  return em.minor == 18 || (em.minor == 19 && em.patch <= 4);
}

Result<LbTable> parse_lb_state_file(std::string_view text, LbFileFormat format,
                                    const LbEmulation& emulation) try {
  auto doc = decode_lb_state_file(text, format);
  if (!doc) return std::unexpected(doc.error());
  return lb_file_impl::build_table(doc->services, doc->endpoints, emulation);
} catch (const lb_file_impl::LbConflict& e) {
  return fail(e.what());
}

}  // namespace cn::fakes::cilium
