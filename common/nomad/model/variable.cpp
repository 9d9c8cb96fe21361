#include "common/nomad/model/variable.h"

#include <nlohmann/json.hpp>

#include "common/util/json_read.h"

namespace cn::nomad {

namespace {

using json::JsonReader;

void read_meta(JsonReader& r, VariableMeta& meta) {
  r.read("Namespace", meta.nomad_namespace);
  r.read("Path", meta.path);
  r.read("ModifyIndex", meta.modify_index);
  // A variable always has a path; one without cannot be matched to a file, so it is refused
  // rather than read as "".
  if (r.ok() && meta.path.empty()) r.fail_at("Path", "missing");
}

}  // namespace

Result<std::vector<VariableMeta>> parse_variable_list_text(std::string_view body) {
  auto doc = json::parse_json_text(body, "variable list");
  if (!doc) return std::unexpected(doc.error());
  // Nomad encodes an empty list as [] (never null), but a nil slice would be null: both mean none.
  if (doc->is_null()) return std::vector<VariableMeta>{};
  if (!doc->is_array()) return fail("variable list: not a JSON array");
  std::vector<VariableMeta> out;
  out.reserve(doc->size());
  for (std::size_t i = 0; i < doc->size(); ++i) {
    JsonReader r((*doc)[i], json::JsonWhere("variable list").index(i));
    VariableMeta meta;
    read_meta(r, meta);
    if (!r.ok()) return fail(r.error());
    out.push_back(std::move(meta));
  }
  return out;
}

Result<Variable> parse_variable_text(std::string_view body) {
  auto doc = json::parse_json_text(body, "variable");
  if (!doc) return std::unexpected(doc.error());
  if (!doc->is_object()) return fail("variable: not a JSON object");
  JsonReader r(*doc, "variable");
  Variable var;
  read_meta(r, var.meta);
  r.read("Items", var.items);
  if (!r.ok()) return fail(r.error());
  return var;
}

}  // namespace cn::nomad
