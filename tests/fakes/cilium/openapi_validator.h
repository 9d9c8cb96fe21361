#pragma once
// A JSON-schema validator for the subset of Swagger 2.0 the Cilium spec uses ($ref, type,
// properties, items, enum, required, additionalProperties, x-nullable), for conformance tests
// of the fake agent. Strict by default: an object schema that lists properties and says nothing
// about additionalProperties rejects unknown keys, so a renamed field is caught.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/util/result.h"

namespace cn::fakes::cilium {

class OpenApiSpec {
 public:
  static Result<OpenApiSpec> load(const std::string& json_path);
  static OpenApiSpec from_json(nlohmann::json spec);

  // The schema of the response body of `method` on `path_template` (relative to basePath, e.g.
  // "/endpoint/{id}/labels") for `status`. nullopt inside: the status is declared without a
  // body. Error: the status (or route) is not declared at all.
  Result<std::optional<nlohmann::json>> response_schema(const std::string& method,
                                                        const std::string& path_template,
                                                        int status) const;
  // JSON-pointer-prefixed messages, empty when `value` conforms.
  std::vector<std::string> validate(const nlohmann::json& value, const nlohmann::json& schema,
                                    bool strict = true) const;
  nlohmann::json definition(const std::string& name) const;
  const nlohmann::json& raw() const { return spec_; }

 private:
  void check(const nlohmann::json& value, const nlohmann::json& schema, const std::string& where,
             bool strict, int depth, std::vector<std::string>& errors) const;
  const nlohmann::json& resolve(const nlohmann::json& schema) const;
  nlohmann::json spec_;
};

// Go encoding/json omitempty as the agent's models use it: no "" strings, [] arrays, false
// booleans or 0 numbers as object members, except the members Cilium's models declare without
// omitempty (state, controller counters). Returns the offending JSON pointers.
std::vector<std::string> go_omitempty_violations(const nlohmann::json& value);

}  // namespace cn::fakes::cilium
