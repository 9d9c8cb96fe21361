#include "common/cilium/client/cilium_client_config.h"

namespace cn::cilium {

CiliumClientConfig CiliumClientConfig::resolve(std::string_view flag, const Getenv& getenv) {
  CiliumClientConfig c;
  std::string path(flag);
  if (path.empty() && getenv) {
    const char* env = getenv("CILIUM_SOCK");
    if (env != nullptr) path = env;
  }
  if (path.starts_with("unix://")) path.erase(0, 7);
  if (!path.empty()) c.socket_path = std::move(path);
  return c;
}

std::string CiliumClientConfig::describe() const {
  return "socket=\"" + socket_path +
         "\" connect_timeout_ms=" + std::to_string(connect_timeout.count()) +
         " request_timeout_ms=" + std::to_string(request_timeout.count()) +
         " retry_max_attempts=" + std::to_string(retry.max_attempts);
}

}  // namespace cn::cilium
