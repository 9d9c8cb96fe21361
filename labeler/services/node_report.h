#pragma once
// What one labeler tells the others about its own node's service instances: each instance's
// health (from the local agent's check results, which never reach Nomad's servers) and the
// ports its allocation maps. Published as one Nomad Variable per node, so a node reads the
// checks of its own allocations only and every other node reads one variable per node that
// changed: the cost follows the rate of change, not cluster size times services.
//
// Items: "<alloc id>" -> {"s":{"<service>":"" or "<why not ready>"},"p":{"<label>":<port>},
// "a":"<allocation IP>","h":"<host IP>"} ("" = ready), compact JSON in Nomad's string values.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/nomad/model/alloc_checks.h"
#include "common/nomad/model/allocation.h"
#include "labeler/services/service_catalog.h"

namespace cn::labeler {

struct InstanceReport {
  std::map<std::string, InstanceHealth> services;  // by service name
  std::map<std::string, std::int64_t> ports;       // label -> port inside the allocation
  std::string alloc_address;                       // the allocation's own IP (NetworkStatus)
  std::string host_address;                        // the host's, where its ports are mapped

  bool operator==(const InstanceReport&) const = default;
};

// By allocation ID.
using NodeReport = std::map<std::string, InstanceReport>;

// One service's health from its allocation's check results: ready when every check of the
// service passed (or it has none); a failing check wins over a pending one in the reason.
InstanceHealth service_health(const std::vector<nomad::CheckResult>& checks,
                              std::string_view service_name);

std::map<std::string, std::string> encode_node_report(const NodeReport& report);
// Items that are not a report (an operator's edit, a newer format) are skipped, so one bad
// item never hides the node's other instances.
NodeReport decode_node_report(const std::map<std::string, std::string>& items);

// What a node reports for one of its allocations, from the allocation and its check results.
InstanceReport instance_report(const nomad::Allocation& alloc,
                               const std::vector<std::string>& service_names,
                               const std::vector<nomad::CheckResult>& checks);

// Folds a node's report into the catalog's input: health by instance, and each allocation as
// far as the report knows it (addresses and port table) where the input has no better copy.
void add_node_report(const NodeReport& report, CatalogInput& input);

}  // namespace cn::labeler
