#pragma once
// An in-process fake of the Nomad HTTP API, faithful to /work/shared/reference/nomad-api.md:
// wire shape (sorted keys, omitempty rules, UnixNano ints), blocking queries, the event stream
// with its index semantics, ACL errors, plus a scenario API (jobs, placements, client updates)
// and fault injection. Time goes through an injected cn::Clock.
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/util/clock.h"
#include "common/util/result.h"
#include "tests/fakes/http/http_server.h"
#include "tests/fakes/nomad/acl_policy.h"
#include "tests/fakes/nomad/event_buffer.h"
#include "tests/fakes/nomad/go_values.h"
#include "tests/fakes/nomad/model.h"
#include "tests/fakes/nomad/services.h"
#include "tests/fakes/nomad/variables.h"

namespace cn::fakes {

// Event stream transport by Nomad version: chunked up to 1.11.1, a hijacked raw socket with
// Connection: close from 1.11.3 (and 2.0).
enum class StreamTransport { kRaw, kChunked };

struct TokenSpec {
  std::string secret;
  bool management = true;  // management tokens read everything
  // A client token without `policies`: a shorthand for one policy granting read-job in these
  // namespaces ("*" = all), node and agent read, and these variables rules.
  std::vector<std::string> namespaces;
  bool node_read = true;
  bool agent_read = true;
  std::vector<VariablePathRule> variables = {};
  // A client token's policies as Nomad parsed them (parse_acl_policy). When present they alone
  // decide, and the shorthand fields above are ignored.
  std::vector<AclPolicy> policies = {};
};

// A client token holding the policy in `hcl` (the text `nomad acl policy apply` takes).
Result<TokenSpec> token_with_policy(std::string secret, std::string_view hcl);

// A request the token's ACL refused, or answered with entries silently left out.
struct AclDenial {
  std::string route;  // as in RequestRecord
  std::string method;
  std::string target;
  std::string reason;   // the capability that was missing, e.g. "read-job in namespace web"
  bool silent = false;  // true: a 2xx answer without what the token may not see
};

struct FakeNomadConfig {
  std::string host = "127.0.0.1";
  int port = 0;  // 0: pick a free port, see port()
  std::string region = "global";
  std::string datacenter = "dc1";
  std::string version = "1.9.7";
  std::string node_id = "f2c1e0b9-3a4d-5e6f-7a8b-9c0d1e2f3a4b";  // the agent's own node
  std::string node_name = "worker-1";
  std::string node_ip = "10.0.1.15";
  bool acl_enabled = false;
  std::vector<TokenSpec> tokens;
  std::chrono::milliseconds heartbeat{30'000};
  StreamTransport stream_transport = StreamTransport::kRaw;
  // >= 1.11.2: a denied subscription is 200 followed by EOF with no "{}" instead of a 403.
  bool stream_denied_as_eof = false;
  std::size_t event_buffer_size = 100;  // Raft indexes kept for ?index= replay
  // Client -> server sync delay applied to client updates (NetworkStatus, terminal status).
  std::chrono::milliseconds publish_delay{0};
  bool blocking_jitter = true;  // up to wait/16 added to blocking waits, as Nomad does
  std::chrono::nanoseconds max_wait = std::chrono::seconds{300};
  std::uint64_t initial_index = 1000;  // the first mutation gets initial_index + 1
  std::uint64_t seed = 1;              // generated IDs and jitter
  int first_dynamic_port = 20000;
  Clock* clock = nullptr;  // nullptr: the system clock
};

struct PlaceRequest {
  std::string namespace_ = "default";
  std::string job_id;
  std::string group;              // empty: the job's first group
  std::string node_id;            // empty: the local node
  std::string alloc_id;           // empty: generated
  std::optional<int> name_index;  // empty: lowest index not used by a live alloc of the group
  std::string eval_id;            // empty: generated
  std::string deployment_id;      // empty: generated for service jobs, "" otherwise
  std::string signing_key_id;     // empty: the fake's key ID
  std::map<std::string, int> port_values;  // label -> host port; empty: allocated
  std::optional<PlacementMetrics> metrics;
  std::string previous_allocation;
};

struct NetworkStatusSpec {
  std::string address;
  std::string address_ipv6;
  std::string interface_name = "eth0";
};

struct StopOptions {
  // true: `nomad alloc stop` (AllocationUpdateDesiredStatus with DesiredTransition.Migrate, then
  // a PlanResult stop); false: a scheduler stop (one PlanResult).
  bool via_desired_transition = false;
  std::string desired_description = "alloc not needed due to job update";
  // The client's terminal report after the stop; empty: the client never reports.
  std::string client_status = "complete";
};

struct RegisterServicesOptions {
  std::string task;     // empty: the group's services (group services hook); else that task's
  bool canary = false;  // the alloc is a deployment canary: non-empty canary_tags replace tags
  // The alloc's netns address for address_mode "alloc"; empty: the alloc's NetworkStatus.
  // The client knows it at registration, before the server has heard of it.
  std::string alloc_address;
};

struct RequestRecord {
  // agent_self nodes node node_allocations allocation allocations job event_stream variables
  // variable services service allocation_services job_services allocation_checks
  std::string route;
  std::string method;
  std::string target;
  int status = 0;
  MonoTime at{};
};

class FakeNomad {
 public:
  explicit FakeNomad(FakeNomadConfig config = {});
  ~FakeNomad();
  FakeNomad(const FakeNomad&) = delete;
  FakeNomad& operator=(const FakeNomad&) = delete;

  // Listens on config.host:config.port (needs the fake HTTP server); stop() wakes every blocking
  // query and stream first so the server can join its threads.
  Status start();
  void stop();
  int port() const;
  std::string address() const;  // http://127.0.0.1:<port>

  // The whole API as a function, usable without sockets.
  HttpResponse handle(const HttpRequest& request);

  // ---- Scenario ----
  // Registers (or updates: Version+1) a job. Defaults fill an empty group/task list.
  Result<std::uint64_t> register_job(JobSpec spec);
  // Child of a periodic parent: ID "<parent>/periodic-<unix>", ParentID set.
  Result<std::string> launch_periodic(const std::string& ns, const std::string& parent,
                                      std::optional<std::int64_t> launch_unix = std::nullopt);
  // Child of a parameterized parent: ID "<parent>/dispatch-<unix>-<8hex>", meta merged over the
  // parent's, Dispatched true.
  Result<std::string> dispatch_job(const std::string& ns, const std::string& parent,
                                   const StringMap& meta = {}, const std::string& payload = "");
  // Job.Deregister without purge: JobDeregistered, then one PlanResult frame stopping every
  // live alloc of the job, then (after the publish delay) their terminal client updates.
  Status stop_job(const std::string& ns, const std::string& id);
  // A status change by the server (eval/alloc driven): ModifyIndex moves, JobModifyIndex not.
  Status set_job_status(const std::string& ns, const std::string& id, const std::string& status);
  std::optional<Job> job(const std::string& ns, const std::string& id) const;

  // The node table GET /v1/nodes lists. It starts with the agent's own node (config node_id,
  // status ready). Every change moves the nodes table index, which that list blocks on.
  void add_node(NodeRecord node);
  Status set_node_drain(const std::string& node_id, bool drain);
  // A status the servers set: initializing, ready, down (missed heartbeats) or disconnected;
  // anything else is refused, as Nomad's ValidNodeStatus does.
  Status set_node_status(const std::string& node_id, const std::string& status);
  // `nomad node gc` / purge: the node leaves the table; its allocations stay as they are.
  Status remove_node(const std::string& node_id);
  std::optional<NodeRecord> node(const std::string& node_id) const;

  // A plan placing one alloc (PlanResult, ClientStatus pending). Returns the alloc ID.
  Result<std::string> place_alloc(PlaceRequest request);
  // Several allocs in one plan: one frame, all events share the Raft index.
  Result<std::vector<std::string>> place_allocs(std::vector<PlaceRequest> requests);
  // The client's report after CNI ADD: NetworkStatus, running TaskStates, deployment health
  // (AllocationUpdated), after the publish delay.
  Status set_network_status(const std::string& alloc_id, NetworkStatusSpec status);
  // Any client status (pending running complete failed lost unknown), AllocationUpdated.
  Status set_client_status(const std::string& alloc_id, const std::string& client_status,
                           const std::string& description = "");
  Status stop_alloc(const std::string& alloc_id, StopOptions options = {});
  // An in-place update by the scheduler: the alloc runs its job's latest version from now on
  // (one PlanResult). What its client then registers follows that version.
  Status update_alloc_in_place(const std::string& alloc_id);
  std::optional<Alloc> alloc(const std::string& alloc_id) const;
  std::vector<std::string> alloc_ids() const;
  // The server's garbage collection of terminal allocations (core scheduler, then
  // StateStore.DeleteEval): they leave the state, the allocs table index moves to the GC's Raft
  // index, no event is published. A node's allocation index can then go down (GetAllocs answers
  // the max ModifyIndex of what is left). Refuses live and unknown allocations.
  Status gc_allocs(const std::vector<std::string>& alloc_ids);

  std::uint64_t current_index() const;
  // Unrelated Raft traffic: the next mutation gets index `next` (ignored unless it moves forward).
  void skip_to_index(std::uint64_t next);
  // Server restore from an older snapshot: the Raft index drops to `index`, every stored index
  // above it is clamped, the event buffer empties and open streams are closed.
  void reset_index(std::uint64_t index);
  void set_publish_delay(std::chrono::milliseconds delay);
  // Client updates waiting out the publish delay.
  std::size_t pending_updates() const;
  // Applies every delayed client update now (in order), ignoring the delay.
  void flush_updates();

  // ---- Variables (variables_routes.cpp) ----
  // What a management PUT /v1/var/:path does (no ACL, no CAS): one Raft index, the variables
  // table moves, blocking queries wake. Returns the stored variable, or the validation error.
  Result<VariableRecord> put_variable(const std::string& ns, const std::string& path,
                                      const StringMap& items);
  // Deletes if present (a missing variable is not an error, as in Nomad).
  void delete_variable(const std::string& ns, const std::string& path);
  std::optional<VariableRecord> variable(const std::string& ns, const std::string& path) const;
  std::vector<VariableRecord> variables() const;  // every namespace, ordered by (ns, path)
  std::uint64_t variables_index() const;          // the variables table index

  // ---- Native services (services_scenario.cpp, services.h) ----
  // What the client's Upsert RPC does for one workload of the alloc: the registrations of the
  // group's (or one task's) nomad-provider services with Address/Port per address_mode, one Raft
  // index and one ServiceRegistration frame for the rows that changed (none: no index, no
  // event); then one DeleteByID per registration of that workload that is gone. Pending check
  // results appear for the checks of the registered services. Returns the workload's IDs.
  Result<std::vector<std::string>> register_services(const std::string& alloc_id,
                                                     RegisterServicesOptions options = {});
  // The client's deregistration (PreKill, task exit): one DeleteByID, hence one
  // ServiceDeregistration frame, per registration; nullopt: every workload of the alloc. The
  // check results of a whole-alloc deregistration are purged.
  Status deregister_services(const std::string& alloc_id,
                             std::optional<std::string> task = std::nullopt);
  // DELETE /v1/service/:name/:id without ACL: ServiceDeregistration; 404 when absent.
  Status delete_service_registration(const std::string& ns, const std::string& id);
  // The scheduler marks the alloc lost in a plan (PlanResult: desired stop, client lost); from
  // 1.10.4 the same transaction deletes its registrations under Type PlanResult.
  Status mark_alloc_lost(const std::string& alloc_id);
  // A check result as the client's checks hook records it: status pending, success or failure;
  // status_code 0 for tcp checks (omitted); empty output: Nomad's text for the status.
  Status set_check_status(const std::string& alloc_id, const std::string& check,
                          const std::string& status, int status_code = 0, std::string output = "");
  std::vector<ServiceRegistration> service_registrations() const;  // ordered by (ns, ID)
  std::uint64_t service_registrations_index() const;
  std::map<std::string, CheckResult> check_results(const std::string& alloc_id) const;

  // ---- ACL ----
  void set_acl_enabled(bool enabled);
  void add_token(TokenSpec token);
  // Revokes the token; streams opened with it are closed, as Nomad does on token deletion.
  void revoke_token(const std::string& secret);
  // Every request an ACL refused (403, or Nomad's 500 for an allocation in an unreadable
  // namespace) and every answer an ACL trimmed, in order. Unknown tokens count too.
  std::vector<AclDenial> acl_denials() const;

  // ---- Faults ----
  // The next `count` /v1 requests whose path starts with `path_prefix` fail with `status` and
  // `body` (empty: a Nomad-like message). status 0 closes the connection without a response.
  void fail_next(int count, int status, std::string path_prefix = "", std::string body = "");
  // Drops every fail_next rule still pending: an outage that ends at a time the test chooses.
  void clear_faults();
  void set_latency(std::chrono::milliseconds latency);  // added before every /v1 request
  // Streams opened from now on close after writing this many events (-1: never).
  void set_stream_drop_after(int events);
  // Open and new streams stop writing anything (heartbeats included) until cleared.
  void set_stream_stall(bool stall);
  // Closes every open stream now (in chunked mode with Nomad's termination text).
  void drop_streams();
  void set_heartbeat(std::chrono::milliseconds interval);
  void set_stream_transport(StreamTransport transport);

  // ---- Observation ----
  std::vector<RequestRecord> requests() const;
  int request_count(const std::string& route) const;
  std::map<std::string, int> request_counts() const;
  void clear_requests();
  int active_streams() const;
  int blocked_queries() const;
  // Bounded real-time waits so tests never sleep-and-hope.
  bool wait_for_streams(int n, std::chrono::milliseconds timeout = std::chrono::seconds{10}) const;
  bool wait_for_blocked(int n, std::chrono::milliseconds timeout = std::chrono::seconds{10}) const;
  // Until a blocking query parks asking for changes after `index` or later: its client has had
  // the answer at `index`.
  bool wait_for_blocked_after(std::uint64_t index,
                              std::chrono::milliseconds timeout = std::chrono::seconds{10}) const;

  // Loads a scenario document (nodes, tokens, jobs, allocs; see spec_json.h).
  Status load_scenario(const nlohmann::json& doc);

 private:
  struct Delayed {
    MonoTime due;
    std::uint64_t order = 0;
    std::function<void()> apply;  // runs under mu_
  };
  struct FailRule {
    int remaining = 0;
    int status = 500;
    std::string prefix;
    std::string body;
  };
  using Lock = std::unique_lock<std::mutex>;

  // fake_nomad.cpp
  bool wait_change(Lock& lock, MonoTime deadline);
  void wake_locked();
  void note_observed();
  void delay_loop(std::stop_token stop);
  void run_client_update(std::function<void()> apply);
  std::optional<HttpResponse> injected_fault(const HttpRequest& request);
  static std::string route_of(const std::vector<std::string>& segments);

  // scenario.cpp
  std::uint64_t bump_locked();
  void commit_locked(std::uint64_t index, std::vector<Event> events);
  Event alloc_event_locked(const Alloc& alloc, const std::string& type) const;
  Result<Alloc> build_alloc_locked(PlaceRequest& req, std::set<int>& used_names);
  Status register_job_locked(JobSpec spec, std::uint64_t* index_out);
  void apply_client_status_locked(Alloc& alloc, const std::string& status,
                                  const std::string& description);
  void stop_allocs_locked(const std::vector<std::string>& ids, const StopOptions& options);

  // services_scenario.cpp
  Event service_event_locked(const ServiceRegistration& reg, const std::string& type) const;
  // Deletes every registration of the alloc at `index`; events of `type`, none when empty.
  std::vector<Event> delete_alloc_services_locked(const std::string& alloc_id, std::uint64_t index,
                                                  const std::string& type);
  // The server-side deletions Nomad does inside other transactions, per emulated version.
  std::vector<Event> services_on_client_terminal_locked(const Alloc& alloc, std::uint64_t index);
  void services_on_gc_locked(const std::string& alloc_id, std::uint64_t index);
  // Node marked down: events for the node-status transaction (1.8.0 - 1.10.3), or a separate
  // transaction after it (< 1.8.0); nothing from 1.10.4.
  std::vector<Event> services_on_node_down_locked(const std::string& node_id, std::uint64_t index);
  void services_after_node_down_locked(const std::string& node_id);
  std::string job_key(const std::string& ns, const std::string& id) const { return ns + "\n" + id; }

  // v1_routes.cpp
  HttpResponse route_v1(const HttpRequest& request, const std::vector<std::string>& segments);
  struct QueryOut {
    std::uint64_t index = 0;
    // Built once, when the query answers: a parked query re-checks only the index on each change.
    std::function<nlohmann::json()> body;
    std::optional<HttpResponse> error;    // answered at once (ACL, bad input)
    std::optional<HttpResponse> missing;  // answered when the wait ends (object not found)
  };
  // `watch`, when given, is what a parked query waits on (a memdb watch set narrower than the
  // index it answers): it wakes only when that value changes. Without it any change wakes it.
  HttpResponse blocking_query(const HttpRequest& request, const std::function<QueryOut()>& query,
                              const std::function<std::uint64_t()>& watch = {});
  HttpResponse agent_self(const HttpRequest& request);
  HttpResponse nodes_list(const HttpRequest& request);
  HttpResponse node_get(const HttpRequest& request, const std::string& id);
  HttpResponse node_allocations(const HttpRequest& request, const std::string& id);
  HttpResponse allocation_get(const HttpRequest& request, const std::string& id);
  HttpResponse allocations_list(const HttpRequest& request);
  HttpResponse job_get(const HttpRequest& request, const std::string& id);
  const TokenSpec* token_locked(const HttpRequest& request, bool& denied) const;
  // nullptr: no ACL applies (ACLs off, no token needed, or a management token).
  const AclObject* acl_locked(const TokenSpec* token) const;
  bool allow_ns_op_locked(const TokenSpec* token, const std::string& ns,
                          const std::string& op) const;
  bool allow_node_read_locked(const TokenSpec* token) const;
  bool allow_agent_read_locked(const TokenSpec* token) const;
  void record_denial_locked(const HttpRequest& request, std::string reason, bool silent = false);

  // variables_routes.cpp
  HttpResponse variables_list(const HttpRequest& request);
  HttpResponse variable_request(const HttpRequest& request, const std::string& path);
  HttpResponse variable_get(const HttpRequest& request, const std::string& path);
  HttpResponse variable_write(const HttpRequest& request, const std::string& path, bool remove);
  bool variable_allowed_locked(const TokenSpec* token, const std::string& ns,
                               const std::string& path, const std::string& capability) const;
  VariableRecord& store_variable_locked(const std::string& ns, const std::string& path,
                                        const StringMap& items, std::uint64_t index);
  bool can_read_ns_locked(const TokenSpec* token, const std::string& ns) const;

  // services_routes.cpp
  HttpResponse services_list(const HttpRequest& request);
  HttpResponse service_request(const HttpRequest& request);
  HttpResponse service_get(const HttpRequest& request, const std::string& name);
  HttpResponse service_delete(const HttpRequest& request, const std::string& id);
  HttpResponse allocation_services(const HttpRequest& request, const std::string& alloc_id);
  HttpResponse job_services(const HttpRequest& request, const std::string& job_id);
  HttpResponse allocation_checks(const HttpRequest& request, const std::string& alloc_id);
  bool reads_any_namespace_locked(const TokenSpec* token) const;

  // event_stream.cpp
  HttpResponse event_stream(const HttpRequest& request);
  void run_stream(StreamWriter& writer, SubscriptionFilter filter, std::uint64_t cursor,
                  std::string token, int drop_after, bool chunked);

  // control_api.cpp
  HttpResponse route_control(const HttpRequest& request, const std::vector<std::string>& segments);
  // services_control.cpp: the native-service control calls; nullopt when not one of them.
  std::optional<HttpResponse> route_control_services(const HttpRequest& request,
                                                     const std::vector<std::string>& segments,
                                                     const nlohmann::json& body);

  FakeNomadConfig cfg_;
  Clock& clock_;

  mutable std::mutex mu_;
  std::uint64_t index_;
  std::uint64_t allocs_index_ = 1;  // the allocs table index (/v1/allocations)
  std::map<std::string, std::shared_ptr<const Job>> jobs_;  // job_key -> latest version
  std::map<std::string, Alloc> allocs_;                     // by ID, so prefixes are ranges
  std::map<std::string, NodeRecord> nodes_;
  std::uint64_t nodes_index_ = 1;  // the nodes table index (/v1/nodes)
  // Keyed (namespace, path): Nomad's id index, which the list and its paging tokens follow.
  std::map<std::pair<std::string, std::string>, VariableRecord> variables_;
  std::uint64_t variables_index_ = 1;  // the variables table index (/v1/vars)
  ServiceTable services_;
  std::map<std::string, std::map<std::string, CheckResult>> checks_;  // alloc -> check ID -> result
  std::mt19937_64 shuffle_rng_;  // /v1/services order, random like Go map iteration
  EventBuffer events_;
  IdGenerator ids_;
  std::mt19937_64 jitter_rng_;
  std::set<std::stop_source*> waiters_;
  bool stopping_ = false;
  std::uint64_t stream_generation_ = 0;  // bumped to close every open stream
  int next_port_;
  std::map<std::string, std::string> deployments_;  // job_key + version -> deployment ID
  std::string signing_key_id_;

  bool acl_enabled_;
  std::map<std::string, TokenSpec> tokens_;
  std::map<std::string, AclObject> acls_;  // by secret, compiled when the token is added
  std::vector<AclDenial> denials_;
  std::vector<FailRule> fail_rules_;
  std::chrono::milliseconds latency_{0};
  int stream_drop_after_ = -1;
  bool stream_stall_ = false;

  std::vector<Delayed> delayed_;
  std::uint64_t delayed_order_ = 0;

  std::vector<RequestRecord> requests_;
  int active_streams_ = 0;
  int blocked_ = 0;
  std::uint64_t highest_parked_index_ = 0;  // the largest ?index= a query has parked with
  mutable std::condition_variable observed_cv_;

  std::stop_source lifetime_;
  std::jthread delay_thread_;
  std::unique_ptr<HttpServer> server_;
};

}  // namespace cn::fakes
