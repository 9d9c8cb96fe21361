#include "tests/fakes/cilium/rest_services.h"

#include <arpa/inet.h>

#include <charconv>
#include <optional>
#include <set>

#include "tests/fakes/cilium/request_validation.h"

namespace cn::fakes::cilium {

using nlohmann::json;

namespace rest_services_impl {

RestServiceAnswer answer(int status, std::string body = {}) {
  RestServiceAnswer a;
  a.status = status;
  a.body = std::move(body);
  return a;
}

// api.Error: the error text as a JSON string.
RestServiceAnswer api_error(int status, const std::string& message) {
  return answer(status, json(message).dump() + "\n");
}

bool parses_as_ip(const std::string& s) {
  unsigned char buf[16];
  return inet_pton(AF_INET, s.c_str(), buf) == 1 || inet_pton(AF_INET6, s.c_str(), buf) == 1;
}

// cmtypes.ParseAddrCluster hands back netip.ParseAddr's error.
std::string parse_addr_error(const std::string& ip) {
  return "ParseAddr(\"" + ip + "\"): unable to parse IP";
}

std::string str_at(const json& o, const char* key) {
  auto it = o.find(key);
  return it != o.end() && it->is_string() ? it->get<std::string>() : "";
}

// go-openapi's body validation, before the handler: enums (422 code 606) and the required
// backend ip (422 code 602). Types were checked by the binder.
std::optional<RestServiceAnswer> validate(const json& spec) {
  auto bad_enum = [](const std::string& where, const std::string& allowed) {
    return answer(422, openapi_error_body(
                           606, "config." + where + " in body should be one of [" + allowed + "]"));
  };
  auto check = [&](const json& o, const char* key, const std::string& where,
                   std::initializer_list<const char*> allowed) -> std::optional<RestServiceAnswer> {
    if (!o.is_object() || !o.contains(key) || o.at(key).is_null()) return std::nullopt;
    const std::string v = str_at(o, key);
    std::string list;
    for (const char* a : allowed) {
      if (v == a) return std::nullopt;
      list += (list.empty() ? "" : " ") + std::string(a);
    }
    return bad_enum(where, list);
  };
  if (auto fe = spec.find("frontend-address"); fe != spec.end()) {
    if (auto e = check(*fe, "protocol", "frontend-address.protocol", {"tcp", "udp", "any"}))
      return e;
    if (auto e = check(*fe, "scope", "frontend-address.scope", {"external", "internal"})) return e;
  }
  if (auto bes = spec.find("backend-addresses"); bes != spec.end() && bes->is_array()) {
    for (std::size_t i = 0; i < bes->size(); ++i) {
      const json& be = (*bes)[i];
      const std::string where = "backend-addresses." + std::to_string(i);
      if (!be.is_object() || !be.contains("ip") || be.at("ip").is_null()) {
        return answer(422, openapi_error_body(602, "config." + where + ".ip in body is required"));
      }
      if (auto e = check(be, "state", where + ".state",
                         {"active", "terminating", "quarantined", "maintenance"}))
        return e;
    }
  }
  if (auto fl = spec.find("flags"); fl != spec.end()) {
    if (auto e = check(
            *fl, "type", "flags.type",
            {"ClusterIP", "NodePort", "ExternalIPs", "HostPort", "LoadBalancer", "LocalRedirect"}))
      return e;
    if (auto e = check(*fl, "extTrafficPolicy", "flags.extTrafficPolicy", {"Cluster", "Local"}))
      return e;
    if (auto e = check(*fl, "intTrafficPolicy", "flags.intTrafficPolicy", {"Cluster", "Local"}))
      return e;
  }
  return std::nullopt;
}

std::string frontend_key(const json& fe) {
  return str_at(fe, "ip") + ":" + std::to_string(fe.value("port", 0)) + "/" +
         str_at(fe, "protocol") + "/" + str_at(fe, "scope");
}

std::optional<std::int64_t> parse_id(std::string_view raw) {
  std::int64_t id = 0;
  auto [p, ec] = std::from_chars(raw.data(), raw.data() + raw.size(), id);
  if (ec != std::errc{} || p != raw.data() + raw.size()) return std::nullopt;
  return id;
}

json model_of(const json& spec) {
  return {{"spec", spec}, {"status", {{"realized", spec}}}};
}

}  // namespace rest_services_impl

RestServiceAnswer RestServices::put(std::string_view body) {
  using namespace rest_services_impl;
  auto bound = bind_body(body, "config", true);
  if (!bound) return answer(bound.error().status, bound.error().message);
  json spec = *bound;
  if (!spec.is_object()) return api_error(400, "body is not a ServiceSpec");
  if (auto id = spec.find("id"); id != spec.end() && !id->is_null() && !id->is_number_integer()) {
    return answer(400, openapi_error_body(400,
                                          "parsing config body from \"\" failed, because "
                                          "json: cannot unmarshal " +
                                              std::string(id->type_name()) +
                                              " into Go struct field ServiceSpec.id of "
                                              "type int64"));
  }
  if (auto err = validate(spec)) return *err;
  const std::int64_t id = spec.value("id", std::int64_t{0});
  // The handler reads the body's id; the path's {id} is never looked at.
  if (id == 0) {
    if (!spec.value("updateServices", false)) return api_error(500, "invalid service ID 0");
    return answer(200);  // bulk backend-state update: accepted, not modelled
  }
  const json fe = spec.value("frontend-address", json::object());
  if (!parses_as_ip(str_at(fe, "ip"))) {
    return api_error(460, parse_addr_error(str_at(fe, "ip")));
  }
  const std::string scope = str_at(fe, "scope");
  if (scope != "external" && scope != "internal") {
    return api_error(460, "invalid scope \"" + scope + "\"");
  }
  json backends = json::array();
  for (const auto& be : spec.value("backend-addresses", json::array())) {
    if (!parses_as_ip(str_at(be, "ip"))) {
      return api_error(461, parse_addr_error(str_at(be, "ip")));
    }
    json b = be;
    // A missing or zero weight makes the backend maintenance (NewBackendFromBackendModel).
    const auto weight = be.contains("weight") && be.at("weight").is_number_integer()
                            ? be.at("weight").get<std::int64_t>()
                            : 0;
    b["weight"] = weight;
    b["state"] = weight == 0 ? "maintenance" : be.value("state", std::string("active"));
    if (b["state"] == "") b["state"] = "active";
    backends.push_back(std::move(b));
  }
  // flags.type is read before flags is checked for nil: the handler panics.
  if (!spec.contains("flags") || !spec.at("flags").is_object()) {
    RestServiceAnswer dropped;
    dropped.drop = true;
    return dropped;
  }
  json flags = spec.at("flags");
  static const std::set<std::string> kTypes = {"ExternalIPs", "NodePort", "LoadBalancer",
                                               "HostPort", "LocalRedirect"};
  if (!kTypes.contains(str_at(flags, "type"))) flags["type"] = "ClusterIP";
  flags["extTrafficPolicy"] = str_at(flags, "extTrafficPolicy") == "Local" ? "Local" : "Cluster";
  flags["intTrafficPolicy"] = str_at(flags, "intTrafficPolicy") == "Local" ? "Local" : "Cluster";

  std::lock_guard lock(mu_);
  const std::string key = frontend_key(fe);
  for (const auto& [other_id, other] : by_id_) {
    if (other_id != id && frontend_key(other.at("frontend-address")) == key) {
      return api_error(460, "the service provided is already registered with ID " +
                                std::to_string(other_id) + ", please use that ID instead of " +
                                std::to_string(id));
    }
  }
  if (id > 65535) return api_error(500, "invalid service ID " + std::to_string(id));
  auto existing = by_id_.find(id);
  if (existing != by_id_.end() && frontend_key(existing->second.at("frontend-address")) != key) {
    const json& ofe = existing->second.at("frontend-address");
    return api_error(500, "Service ID " + std::to_string(id) + " is already registered to \"" +
                              str_at(ofe, "ip") + ":" + std::to_string(ofe.value("port", 0)) +
                              "\"");
  }
  json stored = {{"id", id}, {"frontend-address", fe}, {"flags", flags}};
  if (!backends.empty()) stored["backend-addresses"] = backends;
  const bool created = existing == by_id_.end();
  by_id_[id] = std::move(stored);
  return answer(created ? 201 : 200);
}

RestServiceAnswer RestServices::remove(std::string_view raw_id) {
  using namespace rest_services_impl;
  auto id = parse_id(raw_id);
  if (!id) {
    return answer(400, openapi_error_body(400, "id in path must be of type int64: \"" +
                                                   std::string(raw_id) + "\""));
  }
  std::lock_guard lock(mu_);
  if (by_id_.erase(*id) == 0) return answer(404);
  return answer(200);
}

RestServiceAnswer RestServices::get(std::string_view raw_id) const {
  using namespace rest_services_impl;
  auto id = parse_id(raw_id);
  if (!id) {
    return answer(400, openapi_error_body(400, "id in path must be of type int64: \"" +
                                                   std::string(raw_id) + "\""));
  }
  std::lock_guard lock(mu_);
  auto it = by_id_.find(*id);
  if (it == by_id_.end()) return answer(404);
  return answer(200, model_of(it->second).dump() + "\n");
}

json RestServices::list() const {
  std::lock_guard lock(mu_);
  json out = json::array();
  for (const auto& [id, spec] : by_id_) out.push_back(rest_services_impl::model_of(spec));
  return out;
}

}  // namespace cn::fakes::cilium
