#pragma once
// In-memory doubles of NomadApi and CiliumApi for the labeler's unit tests: exact control and
// call counts, no sockets. The wire-level behaviour (JSON, status codes, quirks) is covered by
// the integration tests against the fakes.
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/cilium/client/cilium_api.h"
#include "common/nomad/client/nomad_api.h"
#include "common/state/state_store.h"

namespace cn::testing {

// The calls each double counts, by name: a typo is a compile error, not a count of 0 that makes a
// test expecting "no call" pass without testing anything.
enum class NomadCall {
  agent_self,
  allocation,
  job,
  node_allocations,
  event_stream,
  variables,
  variable,
  nodes
};
enum class CiliumCall { config, healthz, get, list, patch_endpoint, patch_labels, del };

class InMemoryNomad : public nomad::NomadApi {
 public:
  void put(nomad::Allocation alloc);
  static constexpr int kFailTimeout = -1;
  void fail_next(int n, int code);  // code 0: transport error; kFailTimeout: the deadline passed
  void fail_next_with(int n, int code, std::string message);
  // The next n calls of one kind fail with this answer; other calls go through.
  void fail_call(NomadCall call, int n, int code, std::string message);
  int calls(NomadCall call) const;

  Result<std::string> local_node_id(Deadline) override;
  Result<nomad::Allocation> allocation(std::string_view id, Deadline) override;
  Result<nomad::Job> job(std::string_view ns, std::string_view id, Deadline) override;
  Result<nomad::Indexed<nomad::AllocationList>> node_allocations(
      std::string_view node, std::uint64_t index, std::chrono::seconds wait, MonoTime,
      std::stop_token stop = {}, const nomad::AllocationSelector& with_job = {}) override;
  Status event_stream(const nomad::EventStreamQuery&, const std::function<bool(std::string_view)>&,
                      std::chrono::milliseconds, std::stop_token) override;

  Result<nomad::Indexed<std::vector<nomad::VariableMeta>>> variables(
      std::string_view ns, std::string_view prefix, std::uint64_t index, std::chrono::seconds wait,
      MonoTime, std::stop_token stop = {}) override;
  Result<nomad::Variable> variable(std::string_view ns, std::string_view path, Deadline) override;
  Result<std::vector<nomad::NodeStub>> nodes(Deadline) override;

  std::string node_id = "f2c1e0b9-3a4d-5e6f-7a8b-9c0d1e2f3a4b";

  // ---- Variables (never blocking: the list answers at once with the table's index) ----
  void put_variable(const std::string& ns, const std::string& path,
                    std::map<std::string, std::string> items);
  void delete_variable(const std::string& ns, const std::string& path);
  // Paths the list leaves out although GET still reads them, as an ACL with `read` but no
  // `list` on them filters Nomad's list.
  std::set<std::string> hidden_from_list;
  // (index asked, deadline given) of each variables() call.
  std::vector<std::pair<std::uint64_t, MonoTime>> variables_calls() const;

  // ---- Nodes (fail_call(NomadCall::nodes, ...) fails the list) ----
  // What nodes() answers, in the order set. Starts with one node, ready: the default node_id,
  // named worker-1 (a cluster of one).
  void set_nodes(std::vector<nomad::NodeStub> nodes);
  // Sets the status of the node with this ID, adding it (named after the ID) if absent.
  void set_node_status(const std::string& id, const std::string& status);
  void remove_node(const std::string& id);

  // ---- Watch support (node and events watchers) ----
  // Blocking node_allocations: with index > 0 the call waits (real time, bounded) until the
  // node's index passes it or expire_blocking() ends the wait like Nomad's `wait` running out.
  void set_blocking(bool blocking);
  void expire_blocking();
  // X-Nomad-Index answered for node_allocations instead of the max ModifyIndex (index resets).
  void set_index(std::optional<std::uint64_t> index);
  // Nomad's GC of an allocation at Raft index `gc_index`: the node's index falls to the newest
  // allocation left (or, with none left, to the allocs table index the GC moved up), and a parked
  // query stays parked until expire_blocking(), as blockingRPC keeps it while not above ?index.
  void remove(const std::string& alloc_id, std::uint64_t gc_index = 0);
  std::vector<std::uint64_t> node_allocation_indexes() const;  // ?index= of each call
  // Per node_allocations answer, the allocations that came with their Job (the caller's selector).
  std::vector<std::vector<std::string>> node_allocation_jobs() const;
  int blocked() const;
  bool wait_for_blocked(int n, std::chrono::milliseconds timeout = std::chrono::seconds{10}) const;

  // Scripted event streams: each event_stream() call takes the next script, delivers its lines,
  // then ends with `end` (nullopt: a clean end), or, when `hold_open`, waits for
  // push_stream_line() / close_stream() / stop. No script left: the call fails at once.
  struct StreamScript {
    StreamScript(std::vector<std::string> l = {},
                 std::optional<Error> e = Error{ErrorKind::transport, "event stream ended", 0, 0},
                 bool hold = false)
        : lines(std::move(l)), end(std::move(e)), hold_open(hold) {}
    std::vector<std::string> lines;
    std::optional<Error> end;
    bool hold_open;
  };
  void script_stream(StreamScript script);
  void push_stream_line(std::string line);
  void close_stream(std::optional<Error> end = Error{ErrorKind::transport, "event stream ended", 0,
                                                     0});
  std::vector<nomad::EventStreamQuery> stream_queries() const;
  bool wait_for_streams(std::size_t n,
                        std::chrono::milliseconds timeout = std::chrono::seconds{10}) const;
  bool stream_open() const;

 private:
  std::optional<Error> injected(NomadCall call);
  std::uint64_t node_index_locked(std::string_view node) const;
  mutable std::mutex mu_;
  mutable std::condition_variable_any cv_;
  bool blocking_ = false;
  std::uint64_t expire_generation_ = 0;
  std::optional<std::uint64_t> index_override_;
  std::uint64_t table_index_ = 0;  // Nomad's "allocs" table index: the last write or GC
  std::vector<std::uint64_t> node_indexes_;
  std::vector<std::vector<std::string>> node_jobs_;
  int blocked_ = 0;
  std::deque<StreamScript> scripts_;
  std::vector<nomad::EventStreamQuery> stream_queries_;
  std::deque<std::string> live_lines_;
  bool live_open_ = false;
  std::optional<Error> live_end_;
  std::map<std::string, nomad::Allocation> allocs_;
  std::map<std::pair<std::string, std::string>, nomad::Variable> variables_;
  std::uint64_t variables_index_ = 0;
  std::vector<std::pair<std::uint64_t, MonoTime>> variables_calls_;
  std::vector<nomad::NodeStub> nodes_ = {
      {"f2c1e0b9-3a4d-5e6f-7a8b-9c0d1e2f3a4b", "worker-1", "ready"}};
  std::map<NomadCall, int> calls_;
  struct CallFailure {
    int left = 0;
    int code = 0;
    std::string message;
  };
  std::map<NomadCall, CallFailure> call_failures_;
  int fail_left_ = 0;
  int fail_code_ = 0;
  std::string fail_message_ = "No cluster leader";
};

class InMemoryCilium : public cilium::CiliumApi {
 public:
  // A fresh endpoint as cilium-cni leaves it: reserved:init, identity 5.
  long long add_init_endpoint(const std::string& alloc_id, const std::string& ip,
                              const std::string& ifname = "eth0");
  void add_reserved_endpoints();  // host (1) and health (4)
  cilium::Endpoint get(long long id) const;
  void set_identity_labels(long long id, std::vector<std::string> labels);
  // What an agent whose --labels filter drops `nomad:` does with a write: the labels land in
  // status.labels.derived and the identity stays reserved:init.
  void set_filtered_labels(long long id, std::vector<std::string> labels);
  int calls(CiliumCall call) const;
  void fail_next(CiliumCall call, int n, int code);
  // Gives endpoint `id` the number `new_id` (any int64: the API's type), as a buggy agent might.
  void renumber(long long id, long long new_id);
  // While held, PATCHes wait as in the agent's limiter, until released or their stop.
  void hold_writes(bool hold);
  bool wait_for_held_writes(int n);
  // Emulate agents: before 1.15 the cni-attachment-id prefix is unknown (400).
  bool knows_attachment_prefix = true;
  // Identity resolution is asynchronous: a write shows up after this many GETs.
  int gets_until_resolved = 0;
  bool endpoint_patch_supported = true;
  // The deadline the caller gave the last PATCH /v1/endpoint/{id}.
  MonoTime last_write_deadline() const;
  // What GET /v1/healthz answers; cluster_name() reads it with the real model. By default an
  // agent of cluster `default` (a bare node name).
  void set_healthz_body(std::string body);

  Status ready(Deadline) override;
  Result<std::string> cluster_name(Deadline) override;
  Result<cilium::Endpoint> endpoint(const cilium::EndpointRef& ref, Deadline) override;
  Result<cilium::EndpointList> endpoints(Deadline) override;
  Status replace_identity_labels(const cilium::EndpointRef& ref,
                                 const std::vector<std::string>& labels, Deadline) override;
  Status set_user_labels(const cilium::EndpointRef& ref, const std::vector<std::string>& labels,
                         Deadline) override;
  Status delete_endpoint(const cilium::EndpointRef& ref, Deadline) override;

 private:
  std::optional<Error> injected(CiliumCall call);
  std::optional<long long> lookup(const cilium::EndpointRef& ref) const;
  long long identity_for(const std::vector<std::string>& labels);
  void resolve_pending();

  mutable std::mutex mu_;
  std::map<long long, cilium::Endpoint> eps_;
  std::map<long long, std::vector<std::string>> pending_;  // written, not yet resolved
  int gets_since_write_ = 0;
  std::map<std::vector<std::string>, long long> identities_;
  long long next_endpoint_ = 100;
  std::map<CiliumCall, int> calls_;
  std::map<CiliumCall, std::pair<int, int>> failures_;
  MonoTime last_write_deadline_{};
  std::string healthz_body_ = R"({"cluster":{"self":"node1"}})";
  std::condition_variable_any held_cv_;
  bool holding_ = false;
  int held_ = 0;
};

// An allocation shaped like nomad/alloc_get.json (job web, group app, meta team/tier).
nomad::Allocation make_alloc(const std::string& id, const std::string& job = "web",
                             const std::string& group = "app",
                             const std::string& client_status = "running");

// The identity labels make_alloc()'s allocation ends with, without meta labels.
extern const std::vector<std::string> kWebLabels;

// The entry the plugin's ADD records (workers only update entries, never create them); a test
// adjusts it before record_plugin_add().
state::StateEntry plugin_entry(const std::string& ip = "10.200.3.17");
Status record_plugin_add(state::StateStore& store, const std::string& alloc_id,
                         state::StateEntry entry = plugin_entry());

}  // namespace cn::testing
