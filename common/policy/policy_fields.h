#pragma once
// The field tables: per supported Cilium release, the members of every object of a cilium.io/v2
// policy's rule schema, with their types and the CRD's constraints
// (common/policy/fields/cilium-<release>.txt, embedded at build time). A new Cilium release is a
// new table; the walker takes its field lists from the newest one.
#include <string>
#include <string_view>
#include <vector>

namespace cn::policy::fields {

struct Field {
  std::string object;
  std::string name;
  std::string
      type;  // string, integer, boolean, int-or-string, obj:<object>, list:<type>, map:string
  std::vector<std::string> constraints;  // required, enum:a|b, max-items:N, ...
};

class Table {
 public:
  Table(std::string release, std::string_view text);

  const std::string& release() const { return release_; }
  const std::vector<Field>& fields() const { return fields_; }
  // The member names of `object`, in table order; empty for an object the table lacks.
  const std::vector<std::string_view>& members(std::string_view object) const;
  std::vector<std::string> objects() const;
  // Lines that are not "<object> <member> <type> [constraint...]": a broken table.
  const std::vector<std::string>& problems() const { return problems_; }

 private:
  std::string release_;
  std::vector<Field> fields_;
  std::vector<std::pair<std::string, std::vector<std::string_view>>> members_;
  std::vector<std::string> problems_;
};

// Every embedded table, oldest release first ("1.16", "1.17", ...).
const std::vector<Table>& tables();
const Table& newest();

}  // namespace cn::policy::fields
