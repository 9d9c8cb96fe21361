#include "tests/fakes/nomad/fake_nomad.h"

#include <algorithm>

#include "tests/fakes/nomad/http_util.h"

namespace cn::fakes {

FakeNomad::FakeNomad(FakeNomadConfig config)
    : cfg_(std::move(config)),
      clock_(cfg_.clock ? *cfg_.clock : static_cast<Clock&>(system_clock())),
      index_(cfg_.initial_index),
      shuffle_rng_(cfg_.seed ^ 0x5851f42d4c957f2dULL),
      events_(cfg_.event_buffer_size),
      ids_(cfg_.seed),
      jitter_rng_(cfg_.seed ^ 0x9e3779b97f4a7c15ULL),
      next_port_(cfg_.first_dynamic_port),
      acl_enabled_(cfg_.acl_enabled) {
  signing_key_id_ = ids_.uuid();
  NodeRecord local;
  local.id = cfg_.node_id;
  local.name = cfg_.node_name;
  local.ip = cfg_.node_ip;
  local.datacenter = cfg_.datacenter;
  nodes_[local.id] = local;
  for (auto& t : cfg_.tokens) add_token(t);
  delay_thread_ = std::jthread([this](std::stop_token stop) { delay_loop(stop); });
}

FakeNomad::~FakeNomad() {
  stop();
}

Status FakeNomad::start() {
  try {
    server_ =
        HttpServer::tcp(cfg_.host, cfg_.port, [this](const HttpRequest& r) { return handle(r); });
  } catch (const std::exception& e) {
    return fail(std::string("fake-nomad: cannot listen: ") + e.what());
  }
  if (!server_) return fail("fake-nomad: cannot listen on " + cfg_.host);
  server_->start();
  return {};
}

void FakeNomad::stop() {
  {
    Lock lock(mu_);
    if (stopping_) return;
    stopping_ = true;
    wake_locked();
  }
  lifetime_.request_stop();
  if (server_) server_->stop();
  delay_thread_.request_stop();
  {
    Lock lock(mu_);
    wake_locked();
  }
  if (delay_thread_.joinable()) delay_thread_.join();
}

int FakeNomad::port() const {
  return server_ ? server_->port() : 0;
}

std::string FakeNomad::address() const {
  return "http://127.0.0.1:" + std::to_string(port());
}

// Every waiter (blocking query, stream, delay thread) re-checks its condition on any change;
// the registry makes a change between "check" and "sleep" impossible to miss because the stop
// request is sticky.
bool FakeNomad::wait_change(Lock& lock, MonoTime deadline) {
  std::stop_source source;
  waiters_.insert(&source);
  lock.unlock();
  bool reached = clock_.sleep_until(deadline, source.get_token());
  lock.lock();
  waiters_.erase(&source);
  return !reached;
}

void FakeNomad::wake_locked() {
  for (auto* s : waiters_) s->request_stop();
}

void FakeNomad::note_observed() {
  observed_cv_.notify_all();
}

void FakeNomad::delay_loop(std::stop_token stop) {
  Lock lock(mu_);
  while (!stop.stop_requested() && !stopping_) {
    if (delayed_.empty()) {
      wait_change(lock, clock_.now() + std::chrono::hours{24});
      continue;
    }
    auto next =
        std::min_element(delayed_.begin(), delayed_.end(), [](const auto& a, const auto& b) {
          return a.due != b.due ? a.due < b.due : a.order < b.order;
        });
    if (clock_.now() >= next->due) {
      auto apply = std::move(next->apply);
      delayed_.erase(next);
      apply();
      continue;
    }
    wait_change(lock, next->due);
  }
}

void FakeNomad::run_client_update(std::function<void()> apply) {
  if (cfg_.publish_delay.count() <= 0 && delayed_.empty()) {
    apply();
    return;
  }
  delayed_.push_back(
      Delayed{clock_.now() + cfg_.publish_delay, delayed_order_++, std::move(apply)});
  wake_locked();
}

std::size_t FakeNomad::pending_updates() const {
  Lock lock(mu_);
  return delayed_.size();
}

void FakeNomad::flush_updates() {
  Lock lock(mu_);
  std::sort(delayed_.begin(), delayed_.end(), [](const auto& a, const auto& b) {
    return a.due != b.due ? a.due < b.due : a.order < b.order;
  });
  auto pending = std::move(delayed_);
  delayed_.clear();
  for (auto& d : pending) d.apply();
}

void FakeNomad::set_publish_delay(std::chrono::milliseconds delay) {
  Lock lock(mu_);
  cfg_.publish_delay = delay;
}

std::string FakeNomad::route_of(const std::vector<std::string>& s) {
  if (s.size() < 2 || s[0] != "v1") return "unknown";
  if (s[1] == "agent" && s.size() == 3 && s[2] == "self") return "agent_self";
  if (s[1] == "nodes" && s.size() == 2) return "nodes";
  if (s[1] == "node" && s.size() == 3) return "node";
  if (s[1] == "node" && s.size() == 4 && s[3] == "allocations") return "node_allocations";
  if (s[1] == "allocation" && s.size() == 3) return "allocation";
  if (s[1] == "allocations" && s.size() == 2) return "allocations";
  if (s[1] == "services" && s.size() == 2) return "services";
  if (s[1] == "service") return "service";
  if (s[1] == "allocation" && s.size() == 4 && s[3] == "services") return "allocation_services";
  if (s[1] == "allocation" && s.size() == 4 && s[3] == "checks") return "allocation_checks";
  if (s[1] == "client" && s.size() == 5 && s[2] == "allocation" && s[4] == "checks") {
    return "allocation_checks";
  }
  if (s[1] == "job" && s.size() >= 4 && s.back() == "services") return "job_services";
  if (s[1] == "job" && s.size() >= 3) return "job";
  if (s[1] == "event" && s.size() == 3 && s[2] == "stream") return "event_stream";
  if (s[1] == "vars" && s.size() == 2) return "variables";
  if (s[1] == "var") return "variable";
  return "unknown";
}

std::optional<HttpResponse> FakeNomad::injected_fault(const HttpRequest& request) {
  Lock lock(mu_);
  for (auto it = fail_rules_.begin(); it != fail_rules_.end(); ++it) {
    if (!request.path.starts_with(it->prefix)) continue;
    FailRule rule = *it;
    if (--it->remaining <= 0) fail_rules_.erase(it);
    if (rule.status == 0) {
      HttpResponse r;
      r.drop_without_response = true;
      return r;
    }
    std::string body = rule.body;
    if (body.empty()) {
      switch (rule.status) {
        case 403:
          body = "Permission denied";
          break;
        case 429:
          body = "Your IP is issuing too many concurrent connections, please rate limit your calls";
          break;
        case 500:
          body = "No cluster leader";
          break;
        default:
          body = "fake-nomad: injected fault";
          break;
      }
    }
    return text_error(rule.status, body);
  }
  return std::nullopt;
}

HttpResponse FakeNomad::handle(const HttpRequest& request) {
  auto segments = path_segments(request.raw_path.empty() ? request.path : request.raw_path);
  if (!segments.empty() && segments[0] == "_fake") return route_control(request, segments);

  std::chrono::milliseconds latency;
  {
    Lock lock(mu_);
    latency = latency_;
  }
  if (latency.count() > 0) clock_.sleep_for(latency, lifetime_.get_token());

  HttpResponse response;
  if (auto fault = injected_fault(request)) {
    response = std::move(*fault);
  } else {
    response = route_v1(request, segments);
  }
  Lock lock(mu_);
  requests_.push_back(RequestRecord{route_of(segments), request.method, request.target,
                                    response.drop_without_response ? 0 : response.status,
                                    clock_.now()});
  return response;
}

// ---- ACL ----

void FakeNomad::set_acl_enabled(bool enabled) {
  Lock lock(mu_);
  acl_enabled_ = enabled;
}

namespace {

// The shorthand fields as the one policy they stand for.
AclPolicy shorthand_policy(const TokenSpec& token) {
  AclPolicy p;
  for (const auto& ns : token.namespaces) p.namespaces.push_back({ns, {"read-job"}});
  p.variables = token.variables;
  p.node = token.node_read ? "read" : "";
  p.agent = token.agent_read ? "read" : "";
  return p;
}

}  // namespace

Result<TokenSpec> token_with_policy(std::string secret, std::string_view hcl) {
  auto policy = parse_acl_policy(hcl);
  if (!policy) return std::unexpected(policy.error());
  TokenSpec t;
  t.secret = std::move(secret);
  t.management = false;
  t.policies = {std::move(*policy)};
  return t;
}

void FakeNomad::add_token(TokenSpec token) {
  Lock lock(mu_);
  acls_.insert_or_assign(
      token.secret, AclObject::compile(token.policies.empty() ? std::vector{shorthand_policy(token)}
                                                              : token.policies));
  tokens_[token.secret] = std::move(token);
}

void FakeNomad::revoke_token(const std::string& secret) {
  Lock lock(mu_);
  tokens_.erase(secret);
  acls_.erase(secret);
  wake_locked();  // streams re-check their token
}

std::vector<AclDenial> FakeNomad::acl_denials() const {
  Lock lock(mu_);
  return denials_;
}

// ---- Faults ----

void FakeNomad::fail_next(int count, int status, std::string path_prefix, std::string body) {
  if (count <= 0) return;
  Lock lock(mu_);
  fail_rules_.push_back(FailRule{count, status, std::move(path_prefix), std::move(body)});
}

void FakeNomad::clear_faults() {
  Lock lock(mu_);
  fail_rules_.clear();
}

void FakeNomad::set_latency(std::chrono::milliseconds latency) {
  Lock lock(mu_);
  latency_ = latency;
}

void FakeNomad::set_stream_drop_after(int events) {
  Lock lock(mu_);
  stream_drop_after_ = events;
}

void FakeNomad::set_stream_stall(bool stall) {
  Lock lock(mu_);
  stream_stall_ = stall;
  wake_locked();
}

void FakeNomad::drop_streams() {
  Lock lock(mu_);
  ++stream_generation_;
  wake_locked();
}

void FakeNomad::set_heartbeat(std::chrono::milliseconds interval) {
  Lock lock(mu_);
  cfg_.heartbeat = interval;
  wake_locked();
}

void FakeNomad::set_stream_transport(StreamTransport transport) {
  Lock lock(mu_);
  cfg_.stream_transport = transport;
}

// ---- Observation ----

std::vector<RequestRecord> FakeNomad::requests() const {
  Lock lock(mu_);
  return requests_;
}

int FakeNomad::request_count(const std::string& route) const {
  Lock lock(mu_);
  return static_cast<int>(std::count_if(requests_.begin(), requests_.end(),
                                        [&](const auto& r) { return r.route == route; }));
}

std::map<std::string, int> FakeNomad::request_counts() const {
  Lock lock(mu_);
  std::map<std::string, int> out;
  for (const auto& r : requests_) ++out[r.route];
  return out;
}

void FakeNomad::clear_requests() {
  Lock lock(mu_);
  requests_.clear();
}

int FakeNomad::active_streams() const {
  Lock lock(mu_);
  return active_streams_;
}

int FakeNomad::blocked_queries() const {
  Lock lock(mu_);
  return blocked_;
}

bool FakeNomad::wait_for_streams(int n, std::chrono::milliseconds timeout) const {
  Lock lock(mu_);
  return observed_cv_.wait_for(lock, timeout, [&] { return active_streams_ >= n; });
}

bool FakeNomad::wait_for_blocked(int n, std::chrono::milliseconds timeout) const {
  Lock lock(mu_);
  return observed_cv_.wait_for(lock, timeout, [&] { return blocked_ >= n; });
}

bool FakeNomad::wait_for_blocked_after(std::uint64_t index,
                                       std::chrono::milliseconds timeout) const {
  Lock lock(mu_);
  return observed_cv_.wait_for(lock, timeout,
                               [&] { return blocked_ > 0 && highest_parked_index_ >= index; });
}

}  // namespace cn::fakes
