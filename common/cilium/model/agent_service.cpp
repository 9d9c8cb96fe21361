#include "common/cilium/model/agent_service.h"

#include <nlohmann/json.hpp>

#include "common/util/json_read.h"

namespace cn::cilium {

namespace {

void read_frontend(json::JsonReader& r, ServiceFrontend& fe) {
  r.read("ip", fe.ip);
  r.read_int("port", fe.port);
  r.read("protocol", fe.protocol);
  r.read("scope", fe.scope);
}

void read_backend(json::JsonReader& r, ServiceBackend& be) {
  r.read("ip", be.ip);
  r.read_int("port", be.port);
  r.read("protocol", be.protocol);
  r.read("state", be.state);
  r.read_int("weight", be.weight);
  r.read("nodeName", be.node_name);
}

void read_spec(json::JsonReader& r, ServiceSpec& spec) {
  r.read("id", spec.id);
  r.with_object("frontend-address",
                [&](json::JsonReader& fe) { read_frontend(fe, spec.frontend); });
  if (const auto* backends = r.array("backend-addresses")) {
    for (std::size_t i = 0; i < backends->size(); ++i) {
      json::JsonReader be((*backends)[i], r.at("backend-addresses", i));
      read_backend(be, spec.backends.emplace_back());
      if (!be.ok()) r.fail(be.error());
    }
  }
  r.with_object("flags", [&](json::JsonReader& flags) {
    flags.read("type", spec.type);
    flags.read("name", spec.name);
    flags.read("namespace", spec.nomad_namespace);
    flags.read("extTrafficPolicy", spec.ext_traffic_policy);
    flags.read("intTrafficPolicy", spec.int_traffic_policy);
  });
}

}  // namespace

Result<std::vector<ServiceSpec>> parse_service_list(std::string_view body) {
  std::vector<ServiceSpec> out;
  auto doc = json::parse_json_text(body, "service list");
  if (!doc) return std::unexpected(doc.error());
  if (doc->is_null()) return out;
  if (!doc->is_array()) {
    return fail(std::string("service list: expected an array, got ") + doc->type_name());
  }
  out.reserve(doc->size());
  for (std::size_t i = 0; i < doc->size(); ++i) {
    json::JsonReader r((*doc)[i], json::JsonWhere("service list").index(i));
    ServiceSpec spec;
    if (!r.with_object("spec", [&](json::JsonReader& s) { read_spec(s, spec); })) {
      r.fail_at("spec", "missing");
    }
    if (!r.ok()) return fail(r.error());
    out.push_back(std::move(spec));
  }
  return out;
}

std::string service_spec_json(const ServiceSpec& spec) {
  nlohmann::json backends = nlohmann::json::array();
  for (const auto& be : spec.backends) {
    nlohmann::json b = {{"ip", be.ip},
                        {"port", be.port},
                        {"protocol", be.protocol},
                        {"state", be.state},
                        {"weight", be.weight}};
    if (!be.node_name.empty()) b["nodeName"] = be.node_name;
    backends.push_back(std::move(b));
  }
  nlohmann::json body = {
      {"id", spec.id},
      {"frontend-address",
       {{"ip", spec.frontend.ip},
        {"port", spec.frontend.port},
        {"protocol", spec.frontend.protocol},
        {"scope", spec.frontend.scope}}},
      {"backend-addresses", std::move(backends)},
      {"flags",
       {{"type", spec.type},
        {"name", spec.name},
        {"namespace", spec.nomad_namespace},
        {"extTrafficPolicy", spec.ext_traffic_policy},
        {"intTrafficPolicy", spec.int_traffic_policy}}},
  };
  return body.dump();
}

}  // namespace cn::cilium
