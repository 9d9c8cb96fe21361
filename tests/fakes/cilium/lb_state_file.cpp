#include "tests/fakes/cilium/lb_state_file.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>

#include "tests/fakes/cilium/policy_translate.h"

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

// encoding/json's UnmarshalTypeError; the decode goes on, but the file is refused.
struct LbDecodeError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::string lb_go_value(const json& j) {
  if (j.is_array()) return "array";
  if (j.is_object()) return "object";
  if (j.is_boolean()) return "bool";
  if (j.is_number_float()) return "number " + j.dump();
  if (j.is_number()) return "number";
  return "string";
}

// One field's place for the error text: the Go struct that holds it and the path from the root.
struct At {
  std::string go_struct;
  std::string path;
  At field(std::string_view go_struct_of_child, std::string_view key) const {
    return {std::string(go_struct_of_child),
            path.empty() ? std::string(key) : path + "." + std::string(key)};
  }
};

[[noreturn]] void type_error(const json& v, const At& at, std::string_view go_struct,
                             std::string_view key, std::string_view go_type) {
  const std::string path = at.path.empty() ? std::string(key) : at.path + "." + std::string(key);
  throw LbDecodeError("json: cannot unmarshal " + lb_go_value(v) + " into Go struct field " +
                      std::string(go_struct) + "." + path + " of type " + std::string(go_type));
}

bool fold_equal(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

// encoding/json matches keys to fields exactly first, then case-insensitively. null leaves the
// field at its zero value, so it reads as absent.
const json* lb_field(const json& obj, std::string_view key) {
  if (auto it = obj.find(std::string(key)); it != obj.end()) {
    return it->is_null() ? nullptr : &*it;
  }
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    if (fold_equal(it.key(), key)) return it->is_null() ? nullptr : &*it;
  }
  return nullptr;
}

// The typed readers: `s` is the Go struct holding `key`, `at` where that struct sits.
std::optional<std::string> opt_str(const json& o, const char* s, const At& at, const char* key) {
  const json* v = lb_field(o, key);
  if (!v) return std::nullopt;
  if (!v->is_string()) type_error(*v, at, s, key, "string");
  return v->get<std::string>();
}

std::string str(const json& o, const char* s, const At& at, const char* key) {
  return opt_str(o, s, at, key).value_or("");
}

std::optional<std::int32_t> opt_i32(const json& o, const char* s, const At& at, const char* key) {
  const json* v = lb_field(o, key);
  if (!v) return std::nullopt;
  if (v->is_number_integer() && !v->is_number_unsigned()) {
    const auto n = v->get<std::int64_t>();
    if (n >= std::numeric_limits<std::int32_t>::min() &&
        n <= std::numeric_limits<std::int32_t>::max()) {
      return static_cast<std::int32_t>(n);
    }
  } else if (v->is_number_unsigned()) {
    const auto n = v->get<std::uint64_t>();
    if (n <= static_cast<std::uint64_t>(std::numeric_limits<std::int32_t>::max())) {
      return static_cast<std::int32_t>(n);
    }
  }
  if (v->is_number()) {
    const std::string path = at.path.empty() ? std::string(key) : at.path + "." + key;
    throw LbDecodeError("json: cannot unmarshal number " + v->dump() + " into Go struct field " +
                        std::string(s) + "." + path + " of type int32");
  }
  type_error(*v, at, s, key, "int32");
}

std::optional<bool> opt_bool(const json& o, const char* s, const At& at, const char* key) {
  const json* v = lb_field(o, key);
  if (!v) return std::nullopt;
  if (!v->is_boolean()) type_error(*v, at, s, key, "bool");
  return v->get<bool>();
}

const json* obj(const json& o, const char* s, const At& at, const char* key, const char* type) {
  const json* v = lb_field(o, key);
  if (v && !v->is_object()) type_error(*v, at, s, key, type);
  return v;
}

const json* arr(const json& o, const char* s, const At& at, const char* key, const char* type) {
  const json* v = lb_field(o, key);
  if (v && !v->is_array()) type_error(*v, at, s, key, type);
  return v;
}

std::vector<std::string> str_list(const json& o, const char* s, const At& at, const char* key) {
  std::vector<std::string> out;
  if (const json* a = arr(o, s, at, key, "[]string")) {
    for (const auto& e : *a) {
      if (e.is_null()) {
        out.emplace_back();
        continue;
      }
      if (!e.is_string()) type_error(e, at, s, key, "string");
      out.push_back(e.get<std::string>());
    }
  }
  return out;
}

std::map<std::string, std::string> str_map(const json& o, const char* s, const At& at,
                                           const char* key) {
  std::map<std::string, std::string> out;
  if (const json* m = obj(o, s, at, key, "map[string]string")) {
    for (auto it = m->begin(); it != m->end(); ++it) {
      if (it->is_null()) {
        out[it.key()];
        continue;
      }
      if (!it->is_string()) type_error(*it, at, s, key, "string");
      out[it.key()] = it->get<std::string>();
    }
  }
  return out;
}

// Each element of an array of structs; a non-object element is a type error.
template <typename F>
void each_object(const json& o, const char* s, const At& at, const char* key, const char* elem_type,
                 F&& fn) {
  const json* a = arr(o, s, at, key, (std::string("[]") + elem_type).c_str());
  if (!a) return;
  for (const auto& e : *a) {
    if (e.is_null()) {
      fn(json::object());
      continue;
    }
    if (!e.is_object()) type_error(e, at, s, key, elem_type);
    fn(e);
  }
}

struct Meta {
  std::string name;
  std::string namespace_;
  std::map<std::string, std::string> labels;
  std::map<std::string, std::string> annotations;
};

Meta decode_meta(const json& parent, const char* parent_struct, const At& at) {
  Meta m;
  const json* md = obj(parent, parent_struct, at, "metadata", "v1.ObjectMeta");
  if (!md) return m;
  const At in = at.field("ObjectMeta", "metadata");
  m.name = str(*md, "ObjectMeta", in, "name");
  m.namespace_ = str(*md, "ObjectMeta", in, "namespace");
  (void)str(*md, "ObjectMeta", in, "generateName");
  (void)str(*md, "ObjectMeta", in, "uid");
  (void)str(*md, "ObjectMeta", in, "resourceVersion");
  m.labels = str_map(*md, "ObjectMeta", in, "labels");
  m.annotations = str_map(*md, "ObjectMeta", in, "annotations");
  return m;
}

struct Port {
  std::string name;
  std::string protocol;
  std::int32_t port = 0;
  std::int32_t node_port = 0;
};

struct Service {
  Meta meta;
  std::string type;
  std::string cluster_ip;
  std::vector<std::string> cluster_ips;
  std::vector<Port> ports;
  std::vector<std::string> external_ips;
  std::vector<std::string> ip_families;
  std::string ext_policy;
  std::string int_policy;
  std::string session_affinity;
  std::optional<std::int32_t> affinity_timeout;
  struct Ingress {
    std::string ip;
    std::optional<std::string> ip_mode;
  };
  std::vector<Ingress> ingress;
};

Service decode_service(const json& j, const At& at) {
  Service s;
  s.meta = decode_meta(j, "Service", at);
  if (const json* sp = obj(j, "Service", at, "spec", "v1.ServiceSpec")) {
    const At in = at.field("ServiceSpec", "spec");
    const char* S = "ServiceSpec";
    each_object(*sp, S, in, "ports", "v1.ServicePort", [&](const json& p) {
      const At pin = in.field("ServicePort", "ports");
      Port port;
      port.name = str(p, "ServicePort", pin, "name");
      port.protocol = str(p, "ServicePort", pin, "protocol");
      port.port = opt_i32(p, "ServicePort", pin, "port").value_or(0);
      port.node_port = opt_i32(p, "ServicePort", pin, "nodePort").value_or(0);
      (void)opt_str(p, "ServicePort", pin, "appProtocol");
      // intstr.IntOrString: a string or an int32, nothing else.
      if (const json* tp = lb_field(p, "targetPort"); tp && !tp->is_string()) {
        (void)opt_i32(p, "ServicePort", pin, "targetPort");
      }
      s.ports.push_back(std::move(port));
    });
    (void)str_map(*sp, S, in, "selector");
    s.cluster_ip = str(*sp, S, in, "clusterIP");
    s.cluster_ips = str_list(*sp, S, in, "clusterIPs");
    s.type = str(*sp, S, in, "type");
    s.external_ips = str_list(*sp, S, in, "externalIPs");
    s.session_affinity = str(*sp, S, in, "sessionAffinity");
    (void)str_list(*sp, S, in, "loadBalancerSourceRanges");
    s.ext_policy = str(*sp, S, in, "externalTrafficPolicy");
    (void)opt_i32(*sp, S, in, "healthCheckNodePort");
    if (const json* sac = obj(*sp, S, in, "sessionAffinityConfig", "v1.SessionAffinityConfig")) {
      const At sin = in.field("SessionAffinityConfig", "sessionAffinityConfig");
      if (const json* cip =
              obj(*sac, "SessionAffinityConfig", sin, "clientIP", "v1.ClientIPConfig")) {
        s.affinity_timeout = opt_i32(*cip, "ClientIPConfig",
                                     sin.field("ClientIPConfig", "clientIP"), "timeoutSeconds");
      }
    }
    s.ip_families = str_list(*sp, S, in, "ipFamilies");
    (void)opt_str(*sp, S, in, "ipFamilyPolicy");
    (void)opt_str(*sp, S, in, "loadBalancerClass");
    s.int_policy = str(*sp, S, in, "internalTrafficPolicy");
    (void)opt_str(*sp, S, in, "trafficDistribution");
  }
  if (const json* st = obj(j, "Service", at, "status", "v1.ServiceStatus")) {
    const At in = at.field("ServiceStatus", "status");
    if (const json* lb = obj(*st, "ServiceStatus", in, "loadBalancer", "v1.LoadBalancerStatus")) {
      const At lin = in.field("LoadBalancerStatus", "loadBalancer");
      each_object(*lb, "LoadBalancerStatus", lin, "ingress", "v1.LoadBalancerIngress",
                  [&](const json& i) {
                    const At iin = lin.field("LoadBalancerIngress", "ingress");
                    Service::Ingress ing;
                    ing.ip = str(i, "LoadBalancerIngress", iin, "ip");
                    (void)str(i, "LoadBalancerIngress", iin, "hostname");
                    ing.ip_mode = opt_str(i, "LoadBalancerIngress", iin, "ipMode");
                    s.ingress.push_back(std::move(ing));
                  });
    }
  }
  return s;
}

struct SliceEndpoint {
  std::vector<std::string> addresses;
  std::optional<bool> ready, serving, terminating;
  std::string node_name;
  std::string zone;
};

struct SlicePort {
  std::optional<std::string> name;
  std::optional<std::string> protocol;
  std::optional<std::int32_t> port;
};

struct Slice {
  Meta meta;
  std::string address_type;
  std::vector<SliceEndpoint> endpoints;
  std::vector<SlicePort> ports;
};

Slice decode_slice(const json& j, const At& at) {
  Slice s;
  s.meta = decode_meta(j, "EndpointSlice", at);
  s.address_type = str(j, "EndpointSlice", at, "addressType");
  each_object(j, "EndpointSlice", at, "endpoints", "v1.Endpoint", [&](const json& e) {
    const At in = at.field("Endpoint", "endpoints");
    SliceEndpoint ep;
    ep.addresses = str_list(e, "Endpoint", in, "addresses");
    if (const json* c = obj(e, "Endpoint", in, "conditions", "v1.EndpointConditions")) {
      const At cin = in.field("EndpointConditions", "conditions");
      ep.ready = opt_bool(*c, "EndpointConditions", cin, "ready");
      ep.serving = opt_bool(*c, "EndpointConditions", cin, "serving");
      ep.terminating = opt_bool(*c, "EndpointConditions", cin, "terminating");
    }
    (void)opt_str(e, "Endpoint", in, "hostname");
    ep.node_name = str(e, "Endpoint", in, "nodeName");
    ep.zone = str(e, "Endpoint", in, "zone");
    if (const json* h = obj(e, "Endpoint", in, "hints", "v1.EndpointHints")) {
      const At hin = in.field("EndpointHints", "hints");
      each_object(*h, "EndpointHints", hin, "forZones", "v1.ForZone", [&](const json& z) {
        (void)str(z, "ForZone", hin.field("ForZone", "forZones"), "name");
      });
    }
    s.endpoints.push_back(std::move(ep));
  });
  each_object(j, "EndpointSlice", at, "ports", "v1.EndpointPort", [&](const json& p) {
    const At in = at.field("EndpointPort", "ports");
    SlicePort port;
    port.name = opt_str(p, "EndpointPort", in, "name");
    port.protocol = opt_str(p, "EndpointPort", in, "protocol");
    port.port = opt_i32(p, "EndpointPort", in, "port");
    (void)opt_str(p, "EndpointPort", in, "appProtocol");
    s.ports.push_back(std::move(port));
  });
  return s;
}

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

// pkg/k8s/endpoints.go: the backend state of one endpoint's conditions, nullopt when the
// release drops it.
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
        throw LbDecodeError(
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
  using namespace lb_file_impl;
  json doc;
  if (format == LbFileFormat::json_file) {
    doc = json::parse(text, nullptr, false);
    if (doc.is_discarded()) {
      // encoding/json's message for an empty or cut-off document; others are close enough.
      const bool blank =
          std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isspace(c); });
      return fail(blank ? "unexpected end of JSON input" : "invalid character in JSON input");
    }
  } else {
    auto converted = yaml_to_json(text);
    if (!converted) return fail(converted.error().message);
    doc = std::move(*converted);
  }
  if (doc.is_null()) return LbTable{};
  if (!doc.is_object()) {
    return fail("json: cannot unmarshal " + lb_go_value(doc) +
                " into Go value of type reflectors.StateFile");
  }
  const At root;
  std::vector<Service> services;
  std::vector<Slice> slices;
  each_object(doc, "StateFile", root, "services", "v1.Service", [&](const json& s) {
    services.push_back(decode_service(s, root.field("Service", "services")));
  });
  each_object(doc, "StateFile", root, "endpoints", "v1.EndpointSlice", [&](const json& s) {
    slices.push_back(decode_slice(s, root.field("EndpointSlice", "endpoints")));
  });
  return build_table(services, slices, emulation);
} catch (const lb_file_impl::LbDecodeError& e) {
  return fail(e.what());
}

}  // namespace cn::fakes::cilium
