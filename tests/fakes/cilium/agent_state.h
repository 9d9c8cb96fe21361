#pragma once
// Private to the fake agent: its mutable state and the endpoint-manager operations the HTTP
// handlers and the control API share. One mutex guards everything except the rate limiters
// (they wait on the clock) and the scheduler (its own lock).
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "tests/fakes/cilium/api_rate_limiter.h"
#include "tests/fakes/cilium/cilium_labels.h"
#include "tests/fakes/cilium/clock_scheduler.h"
#include "tests/fakes/cilium/endpoint_id.h"
#include "tests/fakes/cilium/endpoint_model.h"
#include "tests/fakes/cilium/fake_cilium_agent.h"
#include "tests/fakes/cilium/fake_endpoint.h"
#include "tests/fakes/cilium/identity_allocator.h"
#include "tests/fakes/cilium/request_validation.h"

namespace cn::fakes {

struct LatencyRule {
  std::chrono::milliseconds delay{0};
  std::string method;
  std::string route;
};

namespace cilium {

class AgentState {
 public:
  AgentState(const FakeCiliumAgentConfig& config, Clock& clk);

  // --- endpoint manager (callers hold mu) ---
  FakeEndpoint* find(const EndpointRef& ref);
  const FakeEndpoint* find(const EndpointRef& ref) const;
  // Creates from a validated change request; error = {JSON body, HTTP status}.
  Result<std::uint64_t> create(const ChangeRequest& req);
  void remove(std::uint64_t uid);
  // Marks labels as changed: state waiting-for-identity and a background resolution.
  void identity_labels_changed(FakeEndpoint& ep, std::uint64_t uid);
  // Queues a regeneration with the identity the endpoint has (waiting-to-regenerate ->
  // regenerating -> ready, one regeneration step each); `regenerated` tells when it is done.
  void regenerate(FakeEndpoint& ep, std::uint64_t uid, const std::string& reason);
  void add_log(FakeEndpoint& ep, const std::string& state, const std::string& message);
  std::uint16_t allocate_id();
  std::uint64_t uid_of(const FakeEndpoint& ep) const;
  void renumber();
  void add_reserved_endpoints();
  void reset_endpoints();
  ModelContext model_context() const;
  // Parses and finds `raw_id`; on failure sets status (400/404) and the body to send.
  FakeEndpoint* lookup(std::string_view raw_id, std::string& error_body, int& status);
  // After a restart: every endpoint walks restoring -> ready through identity resolution.
  void restore_all();
  DaemonView daemon_view() const;
  void rebuild_limiters();

  mutable std::mutex mu;
  FakeCiliumAgentConfig cfg;
  Clock& clock;
  LabelFilter filter;
  IdentityAllocator identities;
  std::map<std::uint64_t, FakeEndpoint> endpoints;  // by internal uid (stable on renumber)
  std::uint64_t next_uid = 1;
  std::mt19937_64 rng;
  std::uint64_t policy_revision = 1;

  std::vector<FaultRule> faults;
  std::vector<LatencyRule> latencies;
  std::vector<std::pair<std::string, std::string>> disabled_apis;
  bool stall = false;
  bool api_ready = true;
  std::string health_state = "Ok";
  std::string health_msg;
  std::map<std::string, std::shared_ptr<ApiRateLimiter>> limiters;
  std::vector<AgentRequest> log;
  // Notified (under mu) when a regeneration finishes or an endpoint goes away.
  std::condition_variable_any regenerated;

  // Last: destroyed first, so no scheduled task outlives the state it touches.
  ClockScheduler scheduler;

 private:
  void resolve_identity(std::uint64_t uid, std::uint64_t rev);
  void apply_identity(std::uint64_t uid, std::uint64_t rev, Identity ident);
  void regeneration_step(std::uint64_t uid, std::uint64_t rev, const std::string& next_state);
};

}  // namespace cilium
}  // namespace cn::fakes
