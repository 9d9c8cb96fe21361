#pragma once
// The one error shape for outside input (json_read.h): the document's name for people, the
// RFC 6901 pointer of the value inside it, and the reason.
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>

namespace cn::json {

// Where a value sits: the document's name for people and the pointer inside it.
class JsonWhere {
 public:
  JsonWhere(const char* document) : document_(document) {}  // NOLINT: implicit on purpose
  JsonWhere(std::string document) : document_(std::move(document)) {}  // NOLINT
  JsonWhere(std::string_view document) : document_(document) {}        // NOLINT

  // The member `key` (escaped per RFC 6901: "~" as "~0", "/" as "~1") or element `index` below.
  JsonWhere key(std::string_view key) const;
  JsonWhere index(std::size_t index) const;

  const std::string& document() const { return document_; }
  const std::string& pointer() const { return pointer_; }
  // "<document> at <pointer>", or the document alone at the root.
  std::string describe() const;
  // The one error shape: describe() + ": " + reason.
  std::string error(std::string_view reason) const;

 private:
  std::string document_;
  std::string pointer_;
};

}  // namespace cn::json
