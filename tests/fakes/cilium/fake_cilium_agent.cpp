#include "tests/fakes/cilium/fake_cilium_agent.h"

#include <algorithm>

#include "tests/fakes/cilium/agent_endpoint_api.h"
#include "tests/fakes/cilium/agent_routes.h"
#include "tests/fakes/cilium/agent_state.h"
#include "tests/fakes/cilium/endpoint_model.h"
#include "tests/fakes/cilium/lb_state_sync.h"
#include "tests/fakes/cilium/policy_directory.h"
#include "tests/fakes/cilium/rest_services.h"

namespace cn::fakes {

using cilium::AgentState;
using nlohmann::json;

namespace {

long long unix_micros(WallTime t) {
  return std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch()).count();
}

}  // namespace

std::optional<CiliumVersion> parse_cilium_version(std::string_view text) {
  if (text.starts_with("v")) text.remove_prefix(1);
  if (text == "1.15") return CiliumVersion::v1_15;
  if (text == "1.16") return CiliumVersion::v1_16;
  if (text == "1.17") return CiliumVersion::v1_17;
  if (text == "1.18") return CiliumVersion::v1_18;
  if (text == "1.19") return CiliumVersion::v1_19;
  if (text == "1.20") return CiliumVersion::v1_20;
  return std::nullopt;
}

std::optional<CiliumRelease> parse_cilium_release(std::string_view text) {
  if (text.starts_with("v")) text.remove_prefix(1);
  const auto first = text.find('.');
  const auto second = first == std::string_view::npos ? first : text.find('.', first + 1);
  CiliumRelease r;
  if (second != std::string_view::npos) {
    const std::string_view patch = text.substr(second + 1);
    if (patch.empty() || patch.size() > 3 ||
        !std::all_of(patch.begin(), patch.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      return std::nullopt;
    }
    r.patch = std::stoi(std::string(patch));
    text = text.substr(0, second);
  }
  auto v = parse_cilium_version(text);
  if (!v) return std::nullopt;
  r.version = *v;
  return r;
}

std::string to_string(CiliumVersion v) {
  switch (v) {
    case CiliumVersion::v1_15:
      return "1.15";
    case CiliumVersion::v1_16:
      return "1.16";
    case CiliumVersion::v1_17:
      return "1.17";
    case CiliumVersion::v1_18:
      return "1.18";
    case CiliumVersion::v1_19:
      return "1.19";
    case CiliumVersion::v1_20:
      return "1.20";
  }
  return "?";
}

FakeCiliumAgent::FakeCiliumAgent(FakeCiliumAgentConfig config)
    : config_(std::move(config)),
      clock_(config_.clock ? *config_.clock : system_clock()),
      state_(std::make_unique<AgentState>(config_, clock_)),
      rest_services_(std::make_unique<cilium::RestServices>()) {}

FakeCiliumAgent::~FakeCiliumAgent() {
  stop();
  policy_directory_.reset();
  lb_state_sync_.reset();
}

void FakeCiliumAgent::start_server() {
  {
    std::lock_guard lock(stop_mu_);
    serving_stop_ = std::stop_source{};
  }
  server_ = HttpServer::unix_socket(config_.socket_path,
                                    [this](const HttpRequest& req) { return handle(req); });
  server_->start();
}

std::stop_token FakeCiliumAgent::serving_token() {
  std::lock_guard lock(stop_mu_);
  return serving_stop_.get_token();
}

void FakeCiliumAgent::start() {
  std::lock_guard lock(server_mu_);
  if (!config_.static_cnp_path.empty() && !policy_directory_) start_policy_directory();
  if (!config_.lb_state_file.empty() && !lb_state_sync_) start_lb_state_file();
  // PUT /v1/policy feeds the same repository, with or without a directory.
  if (!policy_repository_) policy_repository_ = std::make_unique<cilium::PolicyRepository>();
  {
    std::lock_guard stop_lock(stop_mu_);
    stopped_ = false;
  }
  if (!server_) start_server();
}

void FakeCiliumAgent::stop() {
  {
    std::lock_guard lock(stop_mu_);
    stopped_ = true;
    serving_stop_.request_stop();
  }
  std::jthread pending_restart;
  {
    std::lock_guard lock(restart_mu_);
    pending_restart = std::move(restart_thread_);
  }
  if (pending_restart.joinable()) pending_restart.join();
  std::lock_guard lock(server_mu_);
  if (server_) {
    server_->stop();
    server_.reset();
  }
  if (policy_directory_) policy_directory_->stop();
  if (lb_state_sync_) lb_state_sync_->stop();
}

void FakeCiliumAgent::restart(RestartOptions options) {
  std::lock_guard lock(server_mu_);
  {
    std::lock_guard stop_lock(stop_mu_);
    serving_stop_.request_stop();
  }
  if (server_) {
    server_->stop();
    server_.reset();
  }
  if (options.downtime.count() > 0) std::this_thread::sleep_for(options.downtime);
  {
    std::lock_guard state_lock(state_->mu);
    if (options.renumber) state_->renumber();
    state_->restore_all();
    if (options.api_not_ready_for.count() > 0) {
      state_->api_ready = false;
      AgentState* st = state_.get();
      state_->scheduler.after(options.api_not_ready_for, [st] {
        std::lock_guard l(st->mu);
        st->api_ready = true;
      });
    }
  }
  bool stopped;
  {
    std::lock_guard stop_lock(stop_mu_);
    stopped = stopped_;
  }
  if (!stopped) start_server();
}

HttpResponse FakeCiliumAgent::handle(const HttpRequest& req) {
  if (req.path == "/_fake" || req.path.starts_with("/_fake/")) return handle_control(req);

  AgentRequest rec;
  rec.received = clock_.now();
  rec.real_received = std::chrono::steady_clock::now();
  rec.method = req.method;
  rec.path = req.path;
  rec.body = req.body;
  const cilium::RouteMatch route = cilium::match_route(req.raw_path);
  rec.route = route.found ? route.route : "?";

  auto finish = [&](HttpResponse resp) {
    rec.status = resp.stall || resp.drop_without_response ? 0 : resp.status;
    rec.answered = clock_.now();
    rec.real_answered = std::chrono::steady_clock::now();
    std::lock_guard lock(state_->mu);
    // Bounded so a long demo run cannot grow without limit; tests never get near it.
    if (state_->log.size() >= 200000)
      state_->log.erase(state_->log.begin(), state_->log.begin() + 100000);
    state_->log.push_back(rec);
    return resp;
  };

  std::chrono::milliseconds delay{0};
  std::optional<HttpResponse> injected;
  {
    std::lock_guard lock(state_->mu);
    if (state_->stall) {
      HttpResponse r;
      r.stall = true;
      injected = r;
    }
    for (const auto& l : state_->latencies) {
      if ((l.method.empty() || l.method == req.method) &&
          (l.route.empty() || l.route == rec.route)) {
        delay = std::max(delay, l.delay);
      }
    }
    if (!injected) {
      for (auto it = state_->faults.begin(); it != state_->faults.end(); ++it) {
        if (!it->method.empty() && it->method != req.method) continue;
        if (!it->route.empty() && it->route != rec.route) continue;
        HttpResponse r;
        r.status = it->status;
        r.drop_without_response = it->action == FaultRule::Action::drop;
        r.stall = it->action == FaultRule::Action::stall;
        r.headers.emplace_back("Content-Type", it->content_type);
        r.body = it->body.value_or(cilium::go_json(json("injected fault")));
        if (it->count > 0 && --it->count == 0) state_->faults.erase(it);
        injected = std::move(r);
        break;
      }
    }
    if (!injected) {
      for (const auto& [m, r] : state_->disabled_apis) {
        if ((m.empty() || m == req.method) && (r.empty() || r == rec.route)) {
          HttpResponse resp;
          resp.status = 403;
          resp.headers.emplace_back("Content-Type", "text/plain");
          resp.body =
              "This API is administratively disabled. Contact your administrator for more details.";
          injected = std::move(resp);
          break;
        }
      }
    }
  }
  if (injected && injected->stall) return finish(std::move(*injected));
  if (delay.count() > 0) clock_.sleep_for(delay, serving_token());
  if (injected) return finish(std::move(*injected));

  if (!route.found) {
    return finish(cilium::json_response(
        404, json{{"code", 404}, {"message", "path " + req.path + " was not found"}}));
  }
  if (!route.allows(req.method)) {
    std::string allow;
    for (const auto& m : route.methods) allow += (allow.empty() ? "" : ",") + m;
    HttpResponse r = cilium::json_response(
        405,
        json{{"code", 405},
             {"message", "method " + req.method + " is not allowed, but [" + allow + "] are"}});
    r.headers.emplace_back("Allow", allow);
    return finish(std::move(r));
  }
  if (route.route == "/policy") return finish(policy_route(req));
  if (route.route == "/service") return finish(service_get());
  if (route.route == "/service/{id}") return finish(service_id_route(req, route.id));
  return finish(cilium::serve_v1(*state_, route, req, serving_token()));
}

// --- scenario control ----------------------------------------------------------------------

FaultRule FaultRule::fail(std::string method, std::string route, int status, int count,
                          std::optional<std::string> body) {
  FaultRule f;
  f.method = std::move(method);
  f.route = std::move(route);
  f.status = status;
  f.count = count;
  f.body = std::move(body);
  return f;
}

FaultRule FaultRule::drop(std::string method, std::string route, int count) {
  FaultRule f = fail(std::move(method), std::move(route), 0, count);
  f.action = Action::drop;
  return f;
}

FaultRule FaultRule::stall(std::string method, std::string route, int count) {
  FaultRule f = fail(std::move(method), std::move(route), 0, count);
  f.action = Action::stall;
  return f;
}

void FakeCiliumAgent::inject_fault(FaultRule rule) {
  std::lock_guard lock(state_->mu);
  state_->faults.push_back(std::move(rule));
}

void FakeCiliumAgent::clear_faults() {
  std::lock_guard lock(state_->mu);
  state_->faults.clear();
  state_->latencies.clear();
  state_->disabled_apis.clear();
  state_->stall = false;
}

void FakeCiliumAgent::set_latency(std::chrono::milliseconds delay, std::string method,
                                  std::string route) {
  std::lock_guard lock(state_->mu);
  auto& l = state_->latencies;
  l.erase(
      std::remove_if(l.begin(), l.end(),
                     [&](const LatencyRule& r) { return r.method == method && r.route == route; }),
      l.end());
  if (delay.count() > 0) l.push_back({delay, std::move(method), std::move(route)});
}

void FakeCiliumAgent::set_stall(bool on) {
  std::lock_guard lock(state_->mu);
  state_->stall = on;
}

void FakeCiliumAgent::set_api_ready(bool ready) {
  std::lock_guard lock(state_->mu);
  state_->api_ready = ready;
}

void FakeCiliumAgent::set_daemon_health(std::string state, std::string msg) {
  std::lock_guard lock(state_->mu);
  state_->health_state = std::move(state);
  state_->health_msg = std::move(msg);
}

void FakeCiliumAgent::disable_api(std::string method, std::string route) {
  std::lock_guard lock(state_->mu);
  state_->disabled_apis.emplace_back(std::move(method), std::move(route));
}

void FakeCiliumAgent::set_identity_delay(std::chrono::milliseconds d) {
  std::lock_guard lock(state_->mu);
  state_->cfg.identity_delay = d;
}

void FakeCiliumAgent::set_grace_period(std::chrono::milliseconds d) {
  std::lock_guard lock(state_->mu);
  state_->cfg.identity_grace_period = d;
}

void FakeCiliumAgent::set_regeneration_step(std::chrono::milliseconds d) {
  std::lock_guard lock(state_->mu);
  state_->cfg.regeneration_step = d;
}

bool FakeCiliumAgent::set_endpoint_health(std::string_view endpoint_id, std::string health) {
  std::lock_guard lock(state_->mu);
  std::string err;
  int status = 0;
  cilium::FakeEndpoint* ep = state_->lookup(endpoint_id, err, status);
  if (!ep) return false;
  ep->health = std::move(health);
  return true;
}

void FakeCiliumAgent::reset() {
  state_->scheduler.clear();
  std::lock_guard lock(state_->mu);
  state_->faults.clear();
  state_->latencies.clear();
  state_->disabled_apis.clear();
  state_->stall = false;
  state_->api_ready = true;
  state_->health_state = "Ok";
  state_->health_msg.clear();
  state_->log.clear();
  state_->cfg = config_;
  state_->rebuild_limiters();
  state_->reset_endpoints();
}

// --- state ---------------------------------------------------------------------------------

Result<json> FakeCiliumAgent::create_endpoint(const json& change_request) {
  return cilium::create_from_body(*state_, change_request.dump());
}

std::optional<json> FakeCiliumAgent::endpoint(std::string_view id) const {
  std::lock_guard lock(state_->mu);
  std::string err;
  int status = 0;
  const cilium::FakeEndpoint* ep = state_->lookup(id, err, status);
  if (!ep) return std::nullopt;
  return cilium::endpoint_json(*ep, state_->model_context());
}

std::vector<json> FakeCiliumAgent::endpoints() const {
  std::lock_guard lock(state_->mu);
  std::vector<const cilium::FakeEndpoint*> eps;
  for (const auto& [uid, ep] : state_->endpoints) eps.push_back(&ep);
  std::sort(eps.begin(), eps.end(), [](auto* a, auto* b) { return a->id < b->id; });
  std::vector<json> out;
  for (const auto* ep : eps) out.push_back(cilium::endpoint_json(*ep, state_->model_context()));
  return out;
}

json FakeCiliumAgent::dump_state() const {
  std::lock_guard lock(state_->mu);
  json eps = json::array();
  for (const auto& [uid, ep] : state_->endpoints) {
    eps.push_back(
        {{"uid", uid},
         {"id", ep.id},
         {"state", ep.state},
         {"identity", ep.identity ? json(ep.identity->id) : json(nullptr)},
         {"identity-labels", cilium::labels_to_model(ep.labels.identity_labels())},
         {"custom", cilium::labels_to_model(ep.labels.custom)},
         {"orchestration-identity", cilium::labels_to_model(ep.labels.orchestration_identity)},
         {"orchestration-info", cilium::labels_to_model(ep.labels.orchestration_info)},
         {"disabled", cilium::labels_to_model(ep.labels.disabled)},
         {"cni-attachment-id", ep.cni_attachment_id()},
         {"container-id", ep.container_id},
         {"ipv4", ep.ipv4},
         {"ipv6", ep.ipv6},
         {"health", ep.health},
         {"identity-revision", ep.identity_revision},
         {"regenerations", ep.regenerations},
         // Agent-clock microseconds: how long an endpoint sat under reserved:init is
         // identity-resolved minus created once its final identity is applied.
         {"created-unix-us", unix_micros(ep.created)},
         {"identity-resolved-unix-us", unix_micros(ep.last_identity_resolution)}});
  }
  json idents = json::array();
  for (const auto& ident : state_->identities.all()) idents.push_back(cilium::identity_json(ident));
  json faults = json::array();
  for (const auto& f : state_->faults) {
    faults.push_back({{"method", f.method},
                      {"route", f.route},
                      {"count", f.count},
                      {"status", f.status},
                      {"action", f.action == FaultRule::Action::drop    ? "drop"
                                 : f.action == FaultRule::Action::stall ? "stall"
                                                                        : "status"}});
  }
  return json{{"version", to_string(state_->cfg.version)},
              {"socket", config_.socket_path},
              {"endpoints", eps},
              {"identities", idents},
              {"faults", faults},
              {"stall", state_->stall},
              {"api-ready", state_->api_ready},
              {"health", state_->health_state},
              {"identity-delay-ms", state_->cfg.identity_delay.count()},
              {"grace-period-ms", state_->cfg.identity_grace_period.count()},
              {"regeneration-step-ms", state_->cfg.regeneration_step.count()},
              {"rate-limits", state_->cfg.rate_limits},
              {"label-patterns", state_->filter.patterns()},
              {"allow-list", state_->filter.allow_list()},
              {"pending-tasks", state_->scheduler.pending()},
              {"requests", state_->log.size()}};
}

bool FakeCiliumAgent::wait_settled(std::chrono::milliseconds real_timeout) {
  return state_->scheduler.wait_idle(real_timeout);
}

bool FakeCiliumAgent::wait_endpoint(std::string_view id,
                                    const std::function<bool(const std::optional<json>&)>& pred,
                                    std::chrono::milliseconds real_timeout) const {
  const auto deadline = std::chrono::steady_clock::now() + real_timeout;
  for (;;) {
    if (pred(endpoint(id))) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

// --- request log ----------------------------------------------------------------------------

std::vector<AgentRequest> FakeCiliumAgent::requests() const {
  std::lock_guard lock(state_->mu);
  return state_->log;
}

int FakeCiliumAgent::count(std::string_view method, std::string_view route) const {
  std::lock_guard lock(state_->mu);
  return static_cast<int>(
      std::count_if(state_->log.begin(), state_->log.end(), [&](const AgentRequest& r) {
        return (method.empty() || r.method == method) && (route.empty() || r.route == route);
      }));
}

void FakeCiliumAgent::clear_requests() {
  std::lock_guard lock(state_->mu);
  state_->log.clear();
}

}  // namespace cn::fakes
