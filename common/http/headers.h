#pragma once
// HTTP header fields with case-insensitive names: Nomad writes Go-canonical names
// (X-Nomad-Index) but proxies and other servers may lower-case them, so lookups never depend on
// spelling. Order and duplicates are kept as received.
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cn::http {

bool iequals(std::string_view a, std::string_view b);

class Headers {
 public:
  using Entry = std::pair<std::string, std::string>;

  void add(std::string name, std::string value);
  // Replaces every field named `name` with one field.
  void set(std::string name, std::string value);
  // First value of `name`, if any.
  std::optional<std::string_view> get(std::string_view name) const;
  bool contains(std::string_view name) const { return get(name).has_value(); }
  const std::vector<Entry>& entries() const { return entries_; }
  bool empty() const { return entries_.empty(); }
  void clear() { entries_.clear(); }

 private:
  std::vector<Entry> entries_;
};

}  // namespace cn::http
