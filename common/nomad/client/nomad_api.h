#pragma once
// What the labeler asks of Nomad. A pure interface: the curl implementation lives beside it,
// unit tests use in-memory doubles, integration tests the fake Nomad over real sockets.
//
// Errors: the kind says what happened (not_found: "alloc not found"; permission: 401/403;
// transport, timeout, tls: no answer; bad_answer: a body the models refuse). Messages never
// contain the token.
#include <chrono>
#include <cstdint>
#include <functional>
#include <stop_token>
#include <string>
#include <string_view>

#include "common/nomad/model/allocation.h"
#include "common/nomad/model/job.h"
#include "common/nomad/model/node.h"
#include "common/nomad/model/variable.h"
#include "common/util/clock.h"
#include "common/util/result.h"

namespace cn::nomad {

template <class T>
struct Indexed {
  T value;
  std::uint64_t index = 0;  // X-Nomad-Index of the answer
};

struct EventStreamQuery {
  std::string topic = "Allocation";  // always explicit: no topic means every topic
  std::string nomad_namespace = "*";
  std::uint64_t index = 0;  // first Raft index wanted (inclusive)
};

class NomadApi {
 public:
  virtual ~NomadApi() = default;

  // GET /v1/agent/self -> stats.client.node_id
  [[nodiscard]] virtual Result<std::string> local_node_id(Deadline deadline) = 0;

  // GET /v1/allocation/:id (Job embedded).
  [[nodiscard]] virtual Result<Allocation> allocation(std::string_view alloc_id,
                                                      Deadline deadline) = 0;

  // GET /v1/job/:id?namespace=
  [[nodiscard]] virtual Result<Job> job(std::string_view nomad_namespace, std::string_view job_id,
                                        Deadline deadline) = 0;

  // GET /v1/node/:id/allocations, full allocations with Job and NetworkStatus. With index > 0 it
  // is a blocking query that returns when the node's allocations change past `index`, or after
  // `wait` (capped at 300 s by Nomad). `stop` abandons a parked query at once (shutdown must not
  // wait out a 5-minute blocking query). `with_job` picks the allocations whose Job is decoded
  // (see parse_allocation_list); empty: all of them.
  [[nodiscard]] virtual Result<Indexed<AllocationList>> node_allocations(
      std::string_view node_id, std::uint64_t index, std::chrono::seconds wait, MonoTime deadline,
      std::stop_token stop = {}, const AllocationSelector& with_job = {}) = 0;

  // GET /v1/event/stream. Calls on_line for each complete NDJSON line (heartbeats included)
  // until on_line returns false, the stream ends, no byte arrives for `idle_timeout`, or stop is
  // requested. Returns ok on a clean end requested by on_line or stop; an error otherwise
  // (including EOF, which for a stream is always abnormal).
  [[nodiscard]] virtual Status event_stream(
      const EventStreamQuery& query, const std::function<bool(std::string_view line)>& on_line,
      std::chrono::milliseconds idle_timeout, std::stop_token stop) = 0;

  // GET /v1/vars?prefix=&namespace=, every page: metadata only, no Items. With index > 0 it is a
  // blocking query on the variables table, which wakes on any variable's write, not only those
  // under the prefix. Nomad filters the list by the token's ACL, silently.
  [[nodiscard]] virtual Result<Indexed<std::vector<VariableMeta>>> variables(
      std::string_view nomad_namespace, std::string_view prefix, std::uint64_t index,
      std::chrono::seconds wait, MonoTime deadline, std::stop_token stop = {}) = 0;

  // GET /v1/nodes, every page: each client node of the region with its status (ACL node:read).
  // Not blocking: node reaping reads it once per pass.
  [[nodiscard]] virtual Result<std::vector<NodeStub>> nodes(Deadline deadline) = 0;

  // GET /v1/var/:path?namespace=, with Items. not_found only for Nomad's 404 "variable not
  // found": the one answer that proves a variable is gone.
  [[nodiscard]] virtual Result<Variable> variable(std::string_view nomad_namespace,
                                                  std::string_view path, Deadline deadline) = 0;
};

}  // namespace cn::nomad
