#include "tests/fakes/cilium/request_validation.h"

#include <algorithm>

namespace cn::fakes::cilium {

using nlohmann::json;

std::string openapi_error_body(int code, const std::string& message) {
  return json{{"code", code}, {"message", message}}.dump();
}

namespace {

std::string go_type_name(const json& v) {
  switch (v.type()) {
    case json::value_t::string:
      return "string";
    case json::value_t::boolean:
      return "bool";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
    case json::value_t::number_float:
      return "number";
    case json::value_t::array:
      return "array";
    case json::value_t::object:
      return "object";
    default:
      return "null";
  }
}

cn::Error parse_failure(std::string_view param, const std::string& why) {
  return cn::http_error(400, openapi_error_body(400, "parsing " + std::string(param) +
                                                         " body from \"\" failed, because " + why));
}

cn::Error type_failure(std::string_view param, std::string_view model, std::string_view field,
                       const json& v, std::string_view go_type) {
  return parse_failure(param, "json: cannot unmarshal " + go_type_name(v) +
                                  " into Go struct field " + std::string(model) + "." +
                                  std::string(field) + " of type " + std::string(go_type));
}

enum class Kind { string, integer, boolean, string_array, object };

struct FieldSpec {
  const char* name;
  Kind kind;
};

// Type-checks the known fields; unknown ones are ignored, as Go's decoder does.
std::optional<cn::Error> check_fields(const json& obj, std::string_view param,
                                      std::string_view model, const std::vector<FieldSpec>& specs) {
  for (const auto& spec : specs) {
    const auto it = obj.find(spec.name);
    if (it == obj.end() || it->is_null()) continue;
    const json& v = *it;
    switch (spec.kind) {
      case Kind::string:
        if (!v.is_string()) return type_failure(param, model, spec.name, v, "string");
        break;
      case Kind::integer:
        if (!v.is_number_integer()) return type_failure(param, model, spec.name, v, "int64");
        break;
      case Kind::boolean:
        if (!v.is_boolean()) return type_failure(param, model, spec.name, v, "bool");
        break;
      case Kind::string_array:
        if (!v.is_array()) return type_failure(param, model, spec.name, v, "models.Labels");
        for (const auto& e : v) {
          if (!e.is_string()) return type_failure(param, model, spec.name, e, "string");
        }
        break;
      case Kind::object:
        if (!v.is_object()) return type_failure(param, model, spec.name, v, "object");
        break;
    }
  }
  return std::nullopt;
}

std::string str(const json& obj, const char* key) {
  const auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string();
}
std::int64_t num(const json& obj, const char* key) {
  const auto it = obj.find(key);
  return it != obj.end() && it->is_number_integer() ? it->get<std::int64_t>() : 0;
}
bool flag(const json& obj, const char* key) {
  const auto it = obj.find(key);
  return it != obj.end() && it->is_boolean() && it->get<bool>();
}

}  // namespace

ApiResult bind_body(std::string_view body, std::string_view param, bool required) {
  const bool blank = std::all_of(body.begin(), body.end(), [](char c) {
    return c == ' ' || c == '\n' || c == '\r' || c == '\t';
  });
  if (blank) {
    if (required) {
      return std::unexpected(cn::http_error(
          422, openapi_error_body(602, std::string(param) + " in body is required")));
    }
    return json();
  }
  try {
    return json::parse(body);
  } catch (const json::parse_error& e) {
    return std::unexpected(parse_failure(param, e.what()));
  }
}

Result<ChangeRequest> parse_change_request(std::string_view body) {
  auto bound = bind_body(body, "endpoint", true);
  if (!bound) return std::unexpected(bound.error());
  const json& j = *bound;
  if (!j.is_object()) {
    return std::unexpected(
        parse_failure("endpoint", "json: cannot unmarshal " + go_type_name(j) +
                                      " into Go value of type models.EndpointChangeRequest"));
  }
  static const std::vector<FieldSpec> kFields = {
      {"id", Kind::integer},
      {"container-id", Kind::string},
      {"container-name", Kind::string},
      {"docker-endpoint-id", Kind::string},
      {"docker-network-id", Kind::string},
      {"labels", Kind::string_array},
      {"interface-name", Kind::string},
      {"interface-index", Kind::integer},
      {"container-interface-name", Kind::string},
      {"state", Kind::string},
      {"mac", Kind::string},
      {"host-mac", Kind::string},
      {"addressing", Kind::object},
      {"k8s-pod-name", Kind::string},
      {"k8s-namespace", Kind::string},
      {"k8s-uid", Kind::string},
      {"datapath-map-id", Kind::integer},
      {"policy-enabled", Kind::boolean},
      {"pid", Kind::integer},
      {"sync-build-endpoint", Kind::boolean},
      {"disable-legacy-identifiers", Kind::boolean},
      {"netns-cookie", Kind::string},
      {"datapath-configuration", Kind::object},
      {"properties", Kind::object},
  };
  if (auto err = check_fields(j, "endpoint", "EndpointChangeRequest", kFields)) {
    return std::unexpected(*err);
  }
  ChangeRequest r;
  if (const auto a = j.find("addressing"); a != j.end() && a->is_object()) {
    static const std::vector<FieldSpec> kAddr = {{"ipv4", Kind::string},
                                                 {"ipv4-expiration-uuid", Kind::string},
                                                 {"ipv4-pool-name", Kind::string},
                                                 {"ipv6", Kind::string},
                                                 {"ipv6-expiration-uuid", Kind::string},
                                                 {"ipv6-pool-name", Kind::string}};
    if (auto err = check_fields(*a, "endpoint", "EndpointChangeRequest.addressing", kAddr)) {
      return std::unexpected(*err);
    }
    r.addressing =
        AddressPairReq{str(*a, "ipv4"), str(*a, "ipv4-expiration-uuid"), str(*a, "ipv4-pool-name"),
                       str(*a, "ipv6"), str(*a, "ipv6-expiration-uuid"), str(*a, "ipv6-pool-name")};
  }
  // Validation after decoding: required first, then enums (first error wins).
  const auto st = j.find("state");
  if (st == j.end() || st->is_null()) {
    return std::unexpected(
        cn::http_error(422, openapi_error_body(602, "state in body is required")));
  }
  r.state = st->get<std::string>();
  const auto& states = endpoint_states();
  if (std::find(states.begin(), states.end(), r.state) == states.end()) {
    std::string list;
    for (const auto& s : states) list += (list.empty() ? "" : " ") + s;
    return std::unexpected(cn::http_error(
        422, openapi_error_body(606, "state in body should be one of [" + list + "]")));
  }
  r.id = num(j, "id");
  r.container_id = str(j, "container-id");
  r.container_name = str(j, "container-name");
  r.container_interface_name = str(j, "container-interface-name");
  r.interface_name = str(j, "interface-name");
  r.interface_index = num(j, "interface-index");
  r.mac = str(j, "mac");
  r.host_mac = str(j, "host-mac");
  r.k8s_pod_name = str(j, "k8s-pod-name");
  r.k8s_namespace = str(j, "k8s-namespace");
  r.k8s_uid = str(j, "k8s-uid");
  r.netns_cookie = str(j, "netns-cookie");
  r.docker_endpoint_id = str(j, "docker-endpoint-id");
  r.docker_network_id = str(j, "docker-network-id");
  r.sync_build_endpoint = flag(j, "sync-build-endpoint");
  r.disable_legacy_identifiers = flag(j, "disable-legacy-identifiers");
  r.policy_enabled = flag(j, "policy-enabled");
  if (const auto l = j.find("labels"); l != j.end() && l->is_array()) {
    r.labels = l->get<std::vector<std::string>>();
  }
  return r;
}

Result<std::vector<std::string>> parse_label_spec(std::string_view body) {
  auto bound = bind_body(body, "configuration", true);
  if (!bound) return std::unexpected(bound.error());
  const json& j = *bound;
  if (!j.is_object()) {
    return std::unexpected(
        parse_failure("configuration", "json: cannot unmarshal " + go_type_name(j) +
                                           " into Go value of type models.LabelConfigurationSpec"));
  }
  if (auto err = check_fields(j, "configuration", "LabelConfigurationSpec",
                              {{"user", Kind::string_array}})) {
    return std::unexpected(*err);
  }
  const auto u = j.find("user");
  if (u == j.end() || u->is_null()) return std::vector<std::string>{};
  return u->get<std::vector<std::string>>();
}

Result<std::optional<std::vector<std::string>>> parse_label_filter(std::string_view body) {
  auto bound = bind_body(body, "labels", false);
  if (!bound) return std::unexpected(bound.error());
  const json& j = *bound;
  if (j.is_null()) return std::optional<std::vector<std::string>>{};
  if (!j.is_array() ||
      !std::all_of(j.begin(), j.end(), [](const json& e) { return e.is_string(); })) {
    return std::unexpected(parse_failure("labels", "json: cannot unmarshal " + go_type_name(j) +
                                                       " into Go value of type models.Labels"));
  }
  auto v = j.get<std::vector<std::string>>();
  if (v.empty()) return std::optional<std::vector<std::string>>{};
  return std::optional<std::vector<std::string>>(std::move(v));
}

Result<std::string> parse_batch_delete(std::string_view body) {
  auto bound = bind_body(body, "endpoint", true);
  if (!bound) return std::unexpected(bound.error());
  const json& j = *bound;
  if (!j.is_object()) {
    return std::unexpected(
        parse_failure("endpoint", "json: cannot unmarshal " + go_type_name(j) +
                                      " into Go value of type models.EndpointBatchDeleteRequest"));
  }
  if (auto err = check_fields(j, "endpoint", "EndpointBatchDeleteRequest",
                              {{"container-id", Kind::string}})) {
    return std::unexpected(*err);
  }
  return str(j, "container-id");
}

}  // namespace cn::fakes::cilium
