#pragma once
// Request-body binding the way go-openapi does it before a handler runs: an empty required
// body -> 422 code 602 "<param> in body is required"; undecodable JSON or a wrong type -> 400
// {"code":400,"message":"parsing <param> body from \"\" failed, because ..."}; a missing
// required field -> 422 code 602; a value outside an enum -> 422 code 606.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/util/result.h"

namespace cn::fakes::cilium {

// error.status = HTTP status, error.message = the complete JSON body to send.
using ApiResult = Result<nlohmann::json>;

struct AddressPairReq {
  std::string ipv4, ipv4_expiration_uuid, ipv4_pool_name;
  std::string ipv6, ipv6_expiration_uuid, ipv6_pool_name;
};

struct ChangeRequest {
  std::int64_t id = 0;
  std::string container_id, container_name, container_interface_name, interface_name;
  std::int64_t interface_index = 0;
  std::string mac, host_mac, k8s_pod_name, k8s_namespace, k8s_uid, netns_cookie;
  std::string docker_endpoint_id, docker_network_id;
  std::optional<std::vector<std::string>> labels;  // nullopt: key absent or null
  std::string state;
  std::optional<AddressPairReq> addressing;
  bool sync_build_endpoint = false;
  bool disable_legacy_identifiers = false;
  bool policy_enabled = false;
};

inline const std::vector<std::string>& endpoint_states() {
  static const std::vector<std::string> kStates = {
      "waiting-for-identity", "not-ready",    "waiting-to-regenerate",
      "regenerating",         "restoring",    "ready",
      "disconnecting",        "disconnected", "invalid"};
  return kStates;
}

std::string openapi_error_body(int code, const std::string& message);
// Parses a required body parameter named `param` (e.g. "endpoint", "configuration").
ApiResult bind_body(std::string_view body, std::string_view param, bool required);
Result<ChangeRequest> parse_change_request(std::string_view body);
// LabelConfigurationSpec {"user": [...]}.
Result<std::vector<std::string>> parse_label_spec(std::string_view body);
// Optional `labels` body of GET /endpoint and GET /identity: nullopt when absent/empty.
Result<std::optional<std::vector<std::string>>> parse_label_filter(std::string_view body);
Result<std::string> parse_batch_delete(std::string_view body);

}  // namespace cn::fakes::cilium
