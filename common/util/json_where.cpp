#include "common/util/json_where.h"

namespace cn::json {

JsonWhere JsonWhere::key(std::string_view key) const {
  JsonWhere out = *this;
  out.pointer_.push_back('/');
  for (char c : key) {
    if (c == '~') {
      out.pointer_.append("~0");
    } else if (c == '/') {
      out.pointer_.append("~1");
    } else {
      out.pointer_.push_back(c);
    }
  }
  return out;
}

JsonWhere JsonWhere::index(std::size_t index) const {
  JsonWhere out = *this;
  out.pointer_.append("/").append(std::to_string(index));
  return out;
}

std::string JsonWhere::describe() const {
  if (pointer_.empty()) return document_;
  return document_ + " at " + pointer_;
}

std::string JsonWhere::error(std::string_view reason) const {
  std::string out = describe();
  out.append(": ").append(reason);
  return out;
}

}  // namespace cn::json
