#pragma once
// A fake Cilium agent: the endpoint REST API of /work/shared/reference/cilium-agent-api.md on a
// unix socket, quirks included (reserved:init, key-only label diff, asynchronous identities,
// grace period, JSON-string errors, 422 validation, 429 rate limits), plus fault injection and
// scenario control through this C++ API or over HTTP under /_fake/ on the same socket.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "common/util/clock.h"
#include "common/util/result.h"
#include "tests/fakes/cilium/api_rate_limiter.h"
#include "tests/fakes/cilium/lb_table.h"
#include "tests/fakes/cilium/policy_translate.h"
#include "tests/fakes/http/http_server.h"

namespace cn::fakes {

namespace cilium {
class AgentState;
class LbStateSync;
class RestServices;
class PolicyDirectory;
class PolicyRepository;
}  // namespace cilium

// Emulated agent release; decides the PUT 201 body, container-id: addressing and limiter
// defaults (fact sheet sections 2, 3 and 6). 1.18 and 1.19 exist for --lb-state-file; their
// endpoint API is 1.17's. Ordered: later releases compare greater.
enum class CiliumVersion { v1_15, v1_16, v1_17, v1_18, v1_19, v1_20 };
// "1.18" or "v1.18"; a patch level ("1.18.5") is refused here, see parse_cilium_release.
std::optional<CiliumVersion> parse_cilium_version(std::string_view text);
// "1.19" or "1.19.4": the release and its patch level (0 when not given).
struct CiliumRelease {
  CiliumVersion version = CiliumVersion::v1_17;
  int patch = 0;
};
std::optional<CiliumRelease> parse_cilium_release(std::string_view text);
std::string to_string(CiliumVersion v);
// Cilium's default API rate limits per group for `v` (cc daemon/cmd/api_limits.go; the same
// in every release emulated, see agent_state.cpp).
std::map<std::string, cilium::RateLimitParams> cilium_default_rate_limits(CiliumVersion v);

struct FakeCiliumAgentConfig {
  std::string socket_path;
  CiliumVersion version = CiliumVersion::v1_17;
  Clock* clock = nullptr;  // nullptr: the system clock
  // Label change -> identity applied (the resolver runs in the background).
  std::chrono::milliseconds identity_delay{0};
  // Each of the steps waiting-to-regenerate -> regenerating -> ready.
  std::chrono::milliseconds regeneration_step{0};
  // identity-change-grace-period: Cilium's default is 5 s; 0 keeps unit tests fast.
  std::chrono::milliseconds identity_grace_period{0};
  // false: no limiter (unit tests). true: Cilium's defaults for `version`, then overrides.
  bool rate_limits = false;
  std::map<std::string, cilium::RateLimitParams> rate_limit_overrides;
  // Agent flag --labels, e.g. {"nomad:.*"}: any include pattern turns on allow-list mode.
  std::vector<std::string> label_patterns;
  // Seeds endpoint numbers and global identity numbers (reproducible runs).
  std::uint64_t seed = 1;
  std::string ipv4_alloc_range = "10.200.0.0/16";
  std::string ipv4_router_ip = "10.200.0.1";  // cilium_host: the gateway cilium-cni reports
  std::string health_ipv4 = "10.200.0.2";
  std::string ipv6_alloc_range;  // empty: IPv6 disabled
  std::string ipv6_router_ip;
  bool host_endpoint = true;
  bool health_endpoint = true;
  // --static-cnp-path (Cilium >= 1.16); empty: off. Loaded by start(), before the socket.
  std::string static_cnp_path;
  // --cluster-name; injected into peer selectors of directory policies from 1.19 (emulated
  // 1.20), and the prefix of healthz cluster.self when not "default".
  std::string cluster_name = "default";
  // The agent options its rule validation reads (upstream defaults); `report_options` false
  // answers GET /v1/config without daemonConfigurationMap, as an agent the labeler cannot ask.
  cilium::RuleValidationFlags options;
  bool report_options = true;
  // --policy-audit-mode: every new endpoint starts with PolicyAuditMode Enabled, and GET
  // /v1/config reports it (daemonConfigurationMap.PolicyAuditMode).
  bool policy_audit_mode = false;
  // logging.Fatal of the directory watcher. Empty: the fake records the message (policies()
  // "fatal") and stops watching, like a dead agent. fake-cilium-agent exits the process.
  std::function<void(const std::string&)> on_fatal;
  // Every agent log line of the directory watcher and the LB state file, as it happens (the
  // binary prints them).
  std::function<void(const std::string&)> on_log;
  // Patch level of `version`: the LB state file's backend states differ between 1.18.0-1.18.4
  // and 1.18.5+.
  int version_patch = 0;
  // --lb-state-file (1.18+); empty: off. A name not ending in .json, .yaml or .yml makes
  // start() throw std::invalid_argument with the agent's message.
  std::string lb_state_file;
  // --lb-state-file-interval: quiet time after the last file event, on the agent clock.
  std::chrono::milliseconds lb_state_file_interval{1000};
  // --kube-proxy-replacement: NodePort frontends, and on 1.18 LoadBalancer and ExternalIPs.
  bool kube_proxy_replacement = false;
  // K8S_NODE_NAME: a Local traffic policy keeps backends on this node or on none.
  std::string node_name = "fake-node";
};

struct AgentRequest {
  MonoTime received{};  // on the agent's clock
  MonoTime answered{};
  std::chrono::steady_clock::time_point real_received{};
  std::chrono::steady_clock::time_point real_answered{};
  std::string method;
  std::string path;   // percent-decoded, e.g. /v1/endpoint/cni-attachment-id:<alloc>:eth0
  std::string route;  // path class without /v1, e.g. /endpoint/{id}/labels; "?" if unrouted
  std::string body;
  int status = 0;  // 0: dropped or stalled
};

struct FaultRule {
  enum class Action { status, drop, stall };
  std::string method;  // empty: any method
  std::string route;   // path class as in AgentRequest::route; empty: any /v1 route
  int count = 1;       // requests to hit; -1: until cleared
  Action action = Action::status;
  int status = 500;
  std::optional<std::string> body;  // default: the JSON string "injected fault"
  std::string content_type = "application/json";

  // Convenience constructors (designated initializers trip -Wmissing-field-initializers on
  // g++ 12).
  static FaultRule fail(std::string method, std::string route, int status, int count = 1,
                        std::optional<std::string> body = std::nullopt);
  static FaultRule drop(std::string method, std::string route, int count = 1);
  static FaultRule stall(std::string method, std::string route, int count = 1);
};

struct RestartOptions {
  static RestartOptions renumbered() { return {}; }
  static RestartOptions same_ids() {
    RestartOptions o;
    o.renumber = false;
    return o;
  }
  bool renumber = true;  // new numeric endpoint IDs, endpoints and identities kept
  // Socket absent for this long (real time: it models an outage, not a schedule).
  std::chrono::milliseconds downtime{0};
  // After coming back, PUT/PATCH/DELETE answer 503 "api not ready" this long (agent clock).
  std::chrono::milliseconds api_not_ready_for{0};
};

class FakeCiliumAgent {
 public:
  explicit FakeCiliumAgent(FakeCiliumAgentConfig config);
  ~FakeCiliumAgent();
  FakeCiliumAgent(const FakeCiliumAgent&) = delete;
  FakeCiliumAgent& operator=(const FakeCiliumAgent&) = delete;

  // Loads --static-cnp-path (a fatal there throws std::runtime_error), binds the socket (throws
  // std::system_error) and serves.
  void start();
  void stop();
  const std::string& socket_path() const { return config_.socket_path; }
  const FakeCiliumAgentConfig& config() const { return config_; }

  // --- scenario control -------------------------------------------------------------------
  void inject_fault(FaultRule rule);
  void clear_faults();
  // Added before routing; method/route empty: every /v1 request. Waits on the agent clock.
  void set_latency(std::chrono::milliseconds delay, std::string method = {},
                   std::string route = {});
  void set_stall(bool on);         // every /v1 request is accepted and never answered
  void set_api_ready(bool ready);  // false: PUT/PATCH/DELETE -> 503 "api not ready"
  // GET /healthz cilium.state (Ok, Warning, Failure, Disabled) and msg.
  void set_daemon_health(std::string state, std::string msg = {});
  // 403 plain text "administratively disabled" for method+route until cleared.
  void disable_api(std::string method, std::string route);
  void set_identity_delay(std::chrono::milliseconds d);
  void set_grace_period(std::chrono::milliseconds d);
  void set_regeneration_step(std::chrono::milliseconds d);
  // Forces status.health of an endpoint (e.g. "Failure" for cilium-cni CHECK code 101).
  bool set_endpoint_health(std::string_view endpoint_id, std::string health);
  // Stops and restarts the listener. Must not be called from a request handler (use the
  // control API, which restarts on a helper thread).
  void restart(RestartOptions options = {});
  // Back to the initial state: only host and health endpoints, no faults, empty log.
  void reset();

  // --- state --------------------------------------------------------------------------------
  // Same code path as PUT /v1/endpoint/cilium-local:0 (rate limits and faults bypassed).
  // Returns the Endpoint model, or error {JSON body, HTTP status}.
  Result<nlohmann::json> create_endpoint(const nlohmann::json& change_request);
  // `id` in any API form ("1234", "cni-attachment-id:<alloc>:eth0", "ipv4:10.0.0.5").
  std::optional<nlohmann::json> endpoint(std::string_view id) const;
  std::vector<nlohmann::json> endpoints() const;
  nlohmann::json dump_state() const;
  // Waits (real time) until no identity/regeneration work is due on the agent clock.
  bool wait_settled(std::chrono::milliseconds real_timeout = std::chrono::seconds(5));
  // Waits (real time) until `pred` holds for the endpoint model (nullopt: endpoint absent).
  bool wait_endpoint(std::string_view id,
                     const std::function<bool(const std::optional<nlohmann::json>&)>& pred,
                     std::chrono::milliseconds real_timeout = std::chrono::seconds(5)) const;

  // --- static policy directory ----------------------------------------------------------------
  // GET /_fake/policies: per loaded file its rules as injected and the endpoint IDs they select
  // as subject and as peer; the revision, change counters, agent log lines and any fatal. Rules
  // imported with PUT /v1/policy show as one more entry, file "api:/v1/policy".
  nlohmann::json policies() const;
  std::vector<std::string> agent_log() const;

  // --- load balancer (--lb-state-file) ----------------------------------------------------------
  // The services, frontends and backends of the last good read; empty when the feature is off.
  cilium::LbTable lb_snapshot() const;
  // Reads of the state file so far, good or not (a test waits for the next one).
  std::uint64_t lb_reads() const;
  // File events that restarted the settle timer so far.
  std::uint64_t lb_events() const;
  // Waits (real time) until no settle timer is due at the agent clock's current time.
  bool lb_settled(std::chrono::milliseconds real_timeout = std::chrono::seconds(5));

  // --- request log (only /v1 requests; /_fake/ calls are not logged) --------------------------
  std::vector<AgentRequest> requests() const;
  // Counts by method ("" = any) and route (e.g. "/endpoint/{id}/labels"; "" = any).
  int count(std::string_view method, std::string_view route) const;
  void clear_requests();

 private:
  HttpResponse handle(const HttpRequest& req);
  HttpResponse handle_control(const HttpRequest& req);
  void start_policy_directory();  // agent_policy_api.cpp
  void start_lb_state_file();     // agent_service_api.cpp
  HttpResponse service_get();
  HttpResponse service_id_route(const HttpRequest& req, const std::string& id);
  void agent_log_line(const std::string& line);
  HttpResponse policy_route(const HttpRequest& req);
  HttpResponse policy_get();
  HttpResponse policy_put(const HttpRequest& req);
  HttpResponse policy_delete(const HttpRequest& req);
  // GET /v1/policy's model: the directory's rules and the REST-imported ones.
  nlohmann::json policy_model() const;
  std::uint64_t set_rest_rules(nlohmann::json rules);
  void start_server();
  std::stop_token serving_token();

  FakeCiliumAgentConfig config_;
  Clock& clock_;
  std::unique_ptr<cilium::AgentState> state_;
  std::mutex server_mu_;
  std::unique_ptr<HttpServer> server_;
  std::mutex restart_mu_;  // guards restart_thread_ (set from a connection thread)
  std::jthread restart_thread_;
  std::atomic<bool> restarting_{false};
  // One stop source per listener generation: stop() and restart() request it so handlers
  // sleeping on latency or a rate limiter return and the server can join them.
  std::mutex stop_mu_;
  std::stop_source serving_stop_;
  bool stopped_ = false;
  // policy_directory.h; the repository outlives the watcher that fills it.
  std::unique_ptr<cilium::PolicyRepository> policy_repository_;
  std::unique_ptr<cilium::PolicyDirectory> policy_directory_;
  std::unique_ptr<cilium::LbStateSync> lb_state_sync_;
  // PUT /v1/service/{id} of 1.16 and 1.17 (rest_services.h).
  std::unique_ptr<cilium::RestServices> rest_services_;
  // Rules imported with PUT /v1/policy (Cilium <= 1.18), with their labels, in import order.
  // One lock for a whole PUT or DELETE: upstream serializes them on one queue.
  mutable std::mutex rest_policy_mu_;
  nlohmann::json rest_rules_ = nlohmann::json::array();
  mutable std::mutex agent_log_mu_;
  std::vector<std::string> agent_log_;
};

}  // namespace cn::fakes
