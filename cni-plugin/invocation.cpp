#include "cni-plugin/invocation.h"

namespace cn::plugin {

std::optional<std::string> Invocation::get(const std::string& key) const {
  auto it = env.find(key);
  if (it == env.end()) return std::nullopt;
  return it->second;
}

}  // namespace cn::plugin
