#include "bench/support/endpoint_list_agent.h"

#include <stdexcept>

#include "bench/support/bench_dir.h"
#include "common/cilium/client/curl_cilium_client.h"
#include "tests/fakes/cilium/fake_cilium_agent.h"

namespace cn::bench {
namespace {

using nlohmann::json;

constexpr const char* kTemplateAlloc = "0c4e9f3a-7b21-4d5e-8a6f-1b2c3d4e5f60";
constexpr const char* kTemplateIp = "10.254.254.254";
constexpr const char* kTemplateJob = "template-job-0000";

void replace_all(std::string& s, const std::string& from, const std::string& to) {
  for (auto at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
}

// The fake agent's JSON for one endpoint labeled the way the labeler labels it.
json labeled_template() {
  const std::vector<std::string> labels = {
      "k8s:io.cilium.k8s.policy.cluster=default", "k8s:io.kubernetes.pod.namespace=default",
      "nomad:nomad.group=app", std::string("nomad:nomad.job=") + kTemplateJob,
      "nomad:nomad.namespace=default"};
  BenchDir dir;
  fakes::FakeCiliumAgentConfig ac;
  ac.socket_path = dir.file("template.sock");
  fakes::FakeCiliumAgent agent(ac);
  agent.start();
  auto created = agent.create_endpoint({{"container-id", kTemplateAlloc},
                                        {"container-interface-name", "eth0"},
                                        {"interface-name", "lxc0c4e9f3a"},
                                        {"addressing", {{"ipv4", kTemplateIp}}},
                                        {"state", "waiting-for-identity"},
                                        {"sync-build-endpoint", true}});
  if (!created) throw std::runtime_error("template endpoint: " + created.error().message);
  cilium::CiliumClientConfig cc;
  cc.socket_path = ac.socket_path;
  cilium::CurlCiliumClient client(cc);
  auto ref = cilium::EndpointRef::cni_attachment(kTemplateAlloc, "eth0");
  if (!ref || !client.replace_identity_labels(*ref, labels,
                                              system_clock().now() + std::chrono::seconds{5})) {
    throw std::runtime_error("template endpoint: label write failed");
  }
  agent.wait_settled();
  auto model = agent.endpoint(std::string("cni-attachment-id:") + kTemplateAlloc + ":eth0");
  if (!model) throw std::runtime_error("template endpoint vanished");
  agent.stop();
  return *model;
}

}  // namespace

EndpointListAgent::EndpointListAgent(std::string socket_path,
                                     const std::vector<ListedEndpoint>& endpoints)
    : socket_path_(std::move(socket_path)) {
  json tmpl = labeled_template();
  list_body_ = "[";
  for (std::size_t i = 0; i < endpoints.size(); ++i) {
    tmpl["id"] = static_cast<long long>(i + 1);
    std::string one = tmpl.dump();
    replace_all(one, kTemplateAlloc, endpoints[i].alloc_id);
    replace_all(one, kTemplateIp, endpoints[i].ipv4);
    replace_all(one, kTemplateJob, endpoints[i].job);
    if (i) list_body_ += ",";
    list_body_ += one;
  }
  list_body_ += "]\n";
  server_ = fakes::HttpServer::unix_socket(socket_path_, [this](const fakes::HttpRequest& req) {
    ++requests_;
    fakes::HttpResponse r;
    r.headers.push_back({"Content-Type", "application/json"});
    if (req.method == "GET" && req.path == "/v1/endpoint") {
      r.body = list_body_;
    } else if (req.method == "GET" && req.path == "/v1/config") {
      r.body = "{}\n";
    } else {
      r.status = 404;
    }
    return r;
  });
  server_->start();
}

EndpointListAgent::~EndpointListAgent() {
  server_->stop();
}

}  // namespace cn::bench
