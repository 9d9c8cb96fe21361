#pragma once
// The REST service API of Cilium 1.16 and 1.17 (removed in 1.18): PUT, DELETE and GET
// /v1/service/{id} and GET /v1/service, after cilium/cilium pkg/service/service_api_handler.go
// (daemon/cmd/loadbalancer.go in 1.16) and api/v1/openapi.yaml. Facts: the fact sheet
// cilium-lb-state-file.md section 8.
#include <cstdint>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace cn::fakes::cilium {

struct RestServiceAnswer {
  int status = 200;
  std::string body;   // complete JSON body; empty for the bodiless statuses
  bool drop = false;  // the handler panicked: net/http closes the connection, no answer
};

class RestServices {
 public:
  RestServiceAnswer put(std::string_view body);
  RestServiceAnswer remove(std::string_view raw_id);
  RestServiceAnswer get(std::string_view raw_id) const;
  nlohmann::json list() const;  // GET /v1/service

 private:
  mutable std::mutex mu_;
  std::map<std::int64_t, nlohmann::json> by_id_;  // the stored ServiceSpec, normalized
};

}  // namespace cn::fakes::cilium
