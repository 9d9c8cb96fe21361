#pragma once
// A stand-in Cilium agent for the reconcile benchmark. Cilium numbers endpoints 1..4095 (so
// does the fake agent), which rules out 10,000 endpoints on one agent; this serves GET
// /v1/endpoint from a body built out of the fake agent's own endpoint model, one labeled
// endpoint cloned per allocation, and GET /v1/config for readiness. Anything else is 404. It
// counts what it is asked.
#include <atomic>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tests/fakes/http/http_server.h"

namespace cn::bench {

// An allocation of group "app" in namespace "default", whose endpoint carries its final labels.
struct ListedEndpoint {
  std::string alloc_id;
  std::string ipv4;
  std::string job;
};

class EndpointListAgent {
 public:
  // One endpoint per allocation, labeled as the fake agent shows it after the labeler's PATCH.
  EndpointListAgent(std::string socket_path, const std::vector<ListedEndpoint>& endpoints);
  ~EndpointListAgent();

  const std::string& socket_path() const { return socket_path_; }
  int requests() const { return requests_; }
  void clear_requests() { requests_ = 0; }
  std::size_t list_bytes() const { return list_body_.size(); }

 private:
  std::string socket_path_;
  std::string list_body_;
  std::atomic<int> requests_{0};
  std::unique_ptr<fakes::HttpServer> server_;
};

}  // namespace cn::bench
