#pragma once
// The part of Nomad's Allocation the labeler reads. Every field may be absent on the wire (the
// top-level Allocation is encoded omitempty), so each has a usable zero value.
#include <cstdint>
#include <functional>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/nomad/model/job.h"
#include "common/util/result.h"

namespace cn::nomad {

// Present from the first client update on; for host-network allocs its strings are empty.
struct NetworkStatus {
  std::string interface_name;
  std::string address;       // first IPv4; the IPv6 address for IPv6-only allocs (Nomad 1.11+)
  std::string address_ipv6;  // Nomad 1.9+
};

// One port of the allocation's network (AllocatedResources.Shared.Ports, nomad/structs
// AllocatedPortMapping in hashicorp/nomad): what a service's port label stands for.
struct AllocPort {
  std::string label;
  std::int64_t value = 0;  // the host port: static, or picked from the client's range
  std::int64_t to = 0;     // the port inside the allocation's namespace; 0: same as value
  std::string host_ip;

  bool operator==(const AllocPort&) const = default;
};

struct Allocation {
  std::string id;  // always a valid UUID after parsing
  std::string nomad_namespace;
  std::string job_id;
  std::string task_group;
  std::string name;  // e.g. web.app[0]
  std::string node_id;
  std::string client_status;   // pending running complete failed lost unknown
  std::string desired_status;  // run stop evict
  std::uint64_t create_index = 0;
  std::uint64_t modify_index = 0;
  std::uint64_t alloc_modify_index = 0;
  std::int64_t create_time = 0;  // UnixNano: beyond 2^53, so never through a double
  std::int64_t modify_time = 0;
  std::optional<std::uint64_t> job_modify_index;  // Job.JobModifyIndex when the Job is embedded
  std::optional<NetworkStatus> network_status;
  std::vector<AllocPort> ports;
  std::optional<Job> job;  // embedded by GET /v1/allocation/:id and node allocations; not in events

  // Nomad's own Allocation.TerminalStatus(): DesiredStatus stop/evict, OR ClientStatus
  // complete/failed/lost. `unknown` (disconnected client) is not terminal. A desired-stop alloc
  // may still be running out its shutdown delay; use is_client_terminal() for "has stopped".
  bool is_terminal() const;
  // ClientStatus complete/failed/lost: the client reports the workload gone.
  bool is_client_terminal() const;

  // NetworkStatus.Address, else NetworkStatus.AddressIPv6, else empty.
  std::string_view address() const;
};

// The members parse_allocation() reads (Job included): keep it in step with allocation.cpp.
const json::Fields& allocation_fields();

// Fails on wrong types and on an ID that is not a UUID (the ID becomes file names, URL segments
// and endpoint IDs downstream).
[[nodiscard]] Result<Allocation> parse_allocation(const nlohmann::json& value,
                                                  const json::JsonWhere& where = "Allocation");
// Body of GET /v1/allocation/:id.
[[nodiscard]] Result<Allocation> parse_allocation_text(std::string_view body);

// One bad element must not hide the node's other allocations, so elements that fail are set
// aside with their error instead of failing the whole list.
struct AllocationList {
  std::vector<Allocation> allocations;
  std::vector<Error> rejected;
};

// Body of GET /v1/node/:id/allocations (a JSON array of full allocations). Fails only when the
// body is not JSON or not an array (null counts as empty).
[[nodiscard]] Result<AllocationList> parse_allocation_list(std::string_view body);

// Decides per element, from its ID and ModifyIndex alone, whether the Job is decoded.
using AllocationSelector = std::function<bool(std::string_view id, std::uint64_t modify_index)>;
// The same, decoding the Job only of the elements `with_job` accepts (all when it is empty). The
// others come back whole but without it (job and job_modify_index empty): their Job bytes are
// only checked as JSON (json_field_filter.h), so a Job of the wrong type goes unnoticed there.
[[nodiscard]] Result<AllocationList> parse_allocation_list(std::string_view body,
                                                           const AllocationSelector& with_job);

}  // namespace cn::nomad
