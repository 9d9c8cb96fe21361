#include "tests/fakes/cilium/openapi_validator.h"

#include <fstream>
#include <set>
#include <sstream>

namespace cn::fakes::cilium {

using nlohmann::json;

Result<OpenApiSpec> OpenApiSpec::load(const std::string& json_path) {
  std::ifstream in(json_path);
  if (!in) return fail("cannot open " + json_path);
  try {
    return from_json(json::parse(in));
  } catch (const json::parse_error& e) {
    return fail(json_path + ": " + e.what());
  }
}

OpenApiSpec OpenApiSpec::from_json(json spec) {
  OpenApiSpec s;
  s.spec_ = std::move(spec);
  return s;
}

json OpenApiSpec::definition(const std::string& name) const {
  return spec_.at("definitions").at(name);
}

const json& OpenApiSpec::resolve(const json& schema) const {
  const json* s = &schema;
  for (int hops = 0; hops < 32 && s->is_object() && s->contains("$ref"); ++hops) {
    const std::string ref = (*s)["$ref"];
    const std::string prefix = "#/definitions/";
    if (!ref.starts_with(prefix)) throw std::runtime_error("unsupported $ref " + ref);
    s = &spec_.at("definitions").at(ref.substr(prefix.size()));
  }
  return *s;
}

Result<std::optional<json>> OpenApiSpec::response_schema(const std::string& method,
                                                         const std::string& path_template,
                                                         int status) const {
  const auto& paths = spec_.at("paths");
  if (!paths.contains(path_template)) return fail("route " + path_template + " not in spec");
  std::string m = method;
  for (auto& c : m) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const auto& route = paths[path_template];
  if (!route.contains(m)) return fail(method + " " + path_template + " not in spec");
  const auto& responses = route[m].at("responses");
  const std::string code = std::to_string(status);
  if (!responses.contains(code)) {
    return fail(method + " " + path_template + " does not declare status " + code);
  }
  const auto& resp = responses[code];
  if (!resp.contains("schema")) return std::optional<json>{};
  return std::optional<json>(resp["schema"]);
}

std::vector<std::string> OpenApiSpec::validate(const json& value, const json& schema,
                                               bool strict) const {
  std::vector<std::string> errors;
  check(value, schema, "", strict, 0, errors);
  return errors;
}

namespace {

std::string type_of(const json& v) {
  switch (v.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::boolean:
      return "boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
      return "integer";
    case json::value_t::number_float:
      return "number";
    case json::value_t::string:
      return "string";
    case json::value_t::array:
      return "array";
    case json::value_t::object:
      return "object";
    default:
      return "unknown";
  }
}

bool type_matches(const json& v, const std::string& type) {
  const std::string actual = type_of(v);
  if (type == actual) return true;
  if (type == "number" && actual == "integer") return true;
  if (type == "integer" && actual == "number") {
    const double d = v.get<double>();
    return d == static_cast<double>(static_cast<long long>(d));
  }
  return false;
}

}  // namespace

void OpenApiSpec::check(const json& value, const json& raw_schema, const std::string& where,
                        bool strict, int depth, std::vector<std::string>& errors) const {
  if (depth > 64) {
    errors.push_back(where + ": schema nesting too deep");
    return;
  }
  const json& schema = resolve(raw_schema);
  const std::string at = where.empty() ? "/" : where;
  if (value.is_null()) {
    if (schema.value("x-nullable", false)) return;
    errors.push_back(at + ": null is not allowed");
    return;
  }
  const bool has_props = schema.contains("properties");
  std::string type = schema.value("type", "");
  if (type.empty() && has_props) type = "object";
  if (!type.empty() && !type_matches(value, type)) {
    errors.push_back(at + ": expected " + type + ", got " + type_of(value));
    return;
  }
  if (schema.contains("enum")) {
    bool found = false;
    for (const auto& e : schema["enum"]) found = found || e == value;
    if (!found)
      errors.push_back(at + ": " + value.dump() + " is not one of " + schema["enum"].dump());
  }
  if (value.is_array() && schema.contains("items")) {
    for (std::size_t i = 0; i < value.size(); ++i) {
      check(value[i], schema["items"], where + "/" + std::to_string(i), strict, depth + 1, errors);
    }
  }
  if (!value.is_object()) return;
  if (schema.contains("required")) {
    for (const auto& r : schema["required"]) {
      if (!value.contains(r.get<std::string>()))
        errors.push_back(at + ": missing required \"" + r.get<std::string>() + "\"");
    }
  }
  const json props = has_props ? schema["properties"] : json::object();
  for (const auto& [key, member] : value.items()) {
    const std::string child = where + "/" + key;
    if (props.contains(key)) {
      check(member, props[key], child, strict, depth + 1, errors);
      continue;
    }
    if (schema.contains("additionalProperties")) {
      const json& ap = schema["additionalProperties"];
      if (ap.is_boolean()) {
        if (!ap.get<bool>()) errors.push_back(child + ": unknown property");
      } else if (ap == nlohmann::json{{"type", "object"}}) {
        // A bare `type: object` is interface{} in go-swagger's generated models: the agent's
        // daemonConfigurationMap holds option.Config's fields of every JSON type
        // (daemon/cmd/config.go) under this schema.
      } else {
        check(member, ap, child, strict, depth + 1, errors);
      }
      continue;
    }
    if (strict && has_props) errors.push_back(child + ": unknown property (not in the schema)");
  }
}

std::vector<std::string> go_omitempty_violations(const json& value) {
  // Members Cilium's models declare without omitempty.
  static const std::set<std::string> kAlwaysPresent = {"state", "consecutive-failure-count",
                                                       "failure-count", "success-count"};
  std::vector<std::string> out;
  std::function<void(const json&, const std::string&)> walk = [&](const json& v,
                                                                  const std::string& where) {
    if (v.is_object()) {
      for (const auto& [k, m] : v.items()) {
        const std::string child = where + "/" + k;
        const bool empty = (m.is_string() && m.get<std::string>().empty()) ||
                           (m.is_array() && m.empty()) || (m.is_boolean() && !m.get<bool>()) ||
                           (m.is_number() && m.get<double>() == 0.0);
        if (empty && !kAlwaysPresent.contains(k)) out.push_back(child);
        // A Go map, not a struct: omitempty does not reach its entries (daemon/cmd/config.go
        // copies every option.Config field into it, false and 0 included).
        if (k == "daemonConfigurationMap") continue;
        walk(m, child);
      }
    } else if (v.is_array()) {
      for (std::size_t i = 0; i < v.size(); ++i) walk(v[i], where + "/" + std::to_string(i));
    }
  };
  walk(value, "");
  return out;
}

}  // namespace cn::fakes::cilium
