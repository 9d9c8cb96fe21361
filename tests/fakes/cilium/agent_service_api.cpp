// The load-balancer side of the fake agent: --lb-state-file (Cilium 1.18+) and GET /v1/service.
#include <stdexcept>

#include "tests/fakes/cilium/agent_endpoint_api.h"
#include "tests/fakes/cilium/fake_cilium_agent.h"
#include "tests/fakes/cilium/lb_state_sync.h"
#include "tests/fakes/cilium/rest_services.h"

namespace cn::fakes {

void FakeCiliumAgent::agent_log_line(const std::string& line) {
  {
    std::lock_guard lock(agent_log_mu_);
    agent_log_.push_back(line);
  }
  if (config_.on_log) config_.on_log(line);
}

void FakeCiliumAgent::start_lb_state_file() {
  if (config_.version < CiliumVersion::v1_18) {
    throw std::invalid_argument("lb-state-file needs Cilium 1.18 or later (emulating " +
                                to_string(config_.version) + ")");
  }
  cilium::LbStateSyncOptions opts;
  opts.path = config_.lb_state_file;
  opts.interval = config_.lb_state_file_interval;
  opts.emulation.minor = config_.version == CiliumVersion::v1_18   ? 18
                         : config_.version == CiliumVersion::v1_19 ? 19
                                                                   : 20;
  opts.emulation.patch = config_.version_patch;
  opts.emulation.kube_proxy_replacement = config_.kube_proxy_replacement;
  opts.emulation.ipv6 = !config_.ipv6_alloc_range.empty();
  opts.emulation.node_name = config_.node_name;
  opts.log = [this](const std::string& line) { agent_log_line(line); };
  auto sync = std::make_unique<cilium::LbStateSync>(std::move(opts), clock_);
  // The cell's Invoke error: the agent does not start.
  if (auto st = sync->start(); !st) throw std::invalid_argument(st.error().message);
  lb_state_sync_ = std::move(sync);
}

HttpResponse FakeCiliumAgent::service_get() {
  if (config_.version < CiliumVersion::v1_18) {
    return cilium::json_response(200, rest_services_->list());
  }
  return cilium::json_response(200, cilium::lb_service_list_model(lb_snapshot()));
}

HttpResponse FakeCiliumAgent::service_id_route(const HttpRequest& req, const std::string& id) {
  // 1.18 dropped PUT and DELETE (cilium PR #39084) and GET /service/{id} with them.
  if (config_.version >= CiliumVersion::v1_18) {
    return cilium::json_response(
        404, nlohmann::json{{"code", 404}, {"message", "path " + req.path + " was not found"}});
  }
  cilium::RestServiceAnswer a = req.method == "PUT"      ? rest_services_->put(req.body)
                                : req.method == "DELETE" ? rest_services_->remove(id)
                                                         : rest_services_->get(id);
  HttpResponse r;
  r.status = a.status;
  r.drop_without_response = a.drop;
  if (!a.body.empty()) {
    r.headers.emplace_back("Content-Type", "application/json");
    r.body = std::move(a.body);
  }
  return r;
}

cilium::LbTable FakeCiliumAgent::lb_snapshot() const {
  return lb_state_sync_ ? lb_state_sync_->snapshot() : cilium::LbTable{};
}

std::uint64_t FakeCiliumAgent::lb_reads() const {
  return lb_state_sync_ ? lb_state_sync_->reads() : 0;
}

std::uint64_t FakeCiliumAgent::lb_events() const {
  return lb_state_sync_ ? lb_state_sync_->events() : 0;
}

bool FakeCiliumAgent::lb_settled(std::chrono::milliseconds real_timeout) {
  return lb_state_sync_ ? lb_state_sync_->wait_idle(real_timeout) : true;
}

}  // namespace cn::fakes
