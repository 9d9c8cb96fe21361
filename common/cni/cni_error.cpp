#include "common/cni/cni_error.h"

#include <nlohmann/json.hpp>

namespace cn::cni {

std::string CniError::to_json(const std::string& cni_version) const {
  nlohmann::json j = {{"cniVersion", cni_version}, {"code", static_cast<int>(code)}, {"msg", msg}};
  if (!details.empty()) j["details"] = details;
  // Invalid UTF-8 from the input may end up in details: replace it instead of throwing.
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace cn::cni
