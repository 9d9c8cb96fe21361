#include "tests/fakes/cilium/lb_state_decode.h"

#include <algorithm>
#include <cctype>
#include <limits>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "tests/fakes/cilium/policy_translate.h"

namespace cn::fakes::cilium {

using nlohmann::json;

// Named, not anonymous: the unity build puts several sources in one translation unit.
namespace lb_decode_impl {

using namespace lbdoc;

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

}  // namespace lb_decode_impl

Result<lbdoc::StateFile> decode_lb_state_file(std::string_view text, LbFileFormat format) try {
  using namespace lb_decode_impl;
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
  lbdoc::StateFile out;
  if (doc.is_null()) return out;
  if (!doc.is_object()) {
    return fail("json: cannot unmarshal " + lb_go_value(doc) +
                " into Go value of type reflectors.StateFile");
  }
  const At root;
  each_object(doc, "StateFile", root, "services", "v1.Service", [&](const json& s) {
    out.services.push_back(decode_service(s, root.field("Service", "services")));
  });
  each_object(doc, "StateFile", root, "endpoints", "v1.EndpointSlice", [&](const json& s) {
    out.endpoints.push_back(decode_slice(s, root.field("EndpointSlice", "endpoints")));
  });
  return out;
} catch (const lb_decode_impl::LbDecodeError& e) {
  return fail(e.what());
}

}  // namespace cn::fakes::cilium
