#include "bench/support/nomad_list_server.h"

#include <stdexcept>
#include <thread>

#include <nlohmann/json.hpp>

#include "tests/fakes/http/raw_http_client.h"

namespace cn::bench {

NomadListServer::NomadListServer(fakes::FakeNomad& source, const std::string& node_id,
                                 std::chrono::milliseconds latency)
    : node_path_("/v1/node/" + node_id + "/allocations"), latency_(latency) {
  auto r = fakes::http_request(fakes::HttpTarget::tcp("127.0.0.1", source.port()), "GET",
                               node_path_, {}, {}, std::chrono::minutes{2});
  if (!r || r->status != 200) throw std::runtime_error("fake Nomad: node allocations failed");
  list_body_ = std::move(r->body);
  index_ = r->header("X-Nomad-Index").value_or("1");
  // GET /v1/allocation/:id answers the same full allocation that the node list carries.
  for (const auto& alloc : nlohmann::json::parse(list_body_)) {
    alloc_bodies_[alloc["ID"].get<std::string>()] = alloc.dump();
  }
  server_ = fakes::HttpServer::tcp("127.0.0.1", 0, [this](const fakes::HttpRequest& req) {
    ++requests_;
    // Emulates the round trip to a Nomad server; the answer itself costs nothing to produce.
    std::this_thread::sleep_for(latency_);
    fakes::HttpResponse resp;
    resp.headers = {{"Content-Type", "application/json"}, {"X-Nomad-Index", index_}};
    const std::string prefix = "/v1/allocation/";
    if (req.method == "GET" && req.path == node_path_) {
      resp.body = list_body_;
    } else if (auto it =
                   alloc_bodies_.find(req.path.substr(std::min(req.path.size(), prefix.size())));
               req.method == "GET" && req.path.starts_with(prefix) && it != alloc_bodies_.end()) {
      resp.body = it->second;
    } else {
      resp.status = 404;
      resp.body = "alloc not found";
    }
    return resp;
  });
  server_->start();
}

NomadListServer::~NomadListServer() {
  server_->stop();
}

std::string NomadListServer::address() const {
  return "http://127.0.0.1:" + std::to_string(server_->port());
}

}  // namespace cn::bench
