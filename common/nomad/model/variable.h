#pragma once
// Nomad Variables (nomad/structs/variables.go): the labeler reads the policies kept under one
// prefix. A list answer carries metadata only; Items come from reading one variable.
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/util/result.h"

namespace cn::nomad {

struct VariableMeta {
  std::string nomad_namespace;
  std::string path;
  std::uint64_t modify_index = 0;
};

struct Variable {
  VariableMeta meta;
  std::map<std::string, std::string> items;
};

// Body of GET /v1/vars: a JSON array of VariableMetadata.
[[nodiscard]] Result<std::vector<VariableMeta>> parse_variable_list_text(std::string_view body);
// Body of GET /v1/var/:path.
[[nodiscard]] Result<Variable> parse_variable_text(std::string_view body);

}  // namespace cn::nomad
