#pragma once
// JSON forms of the scenario specs, shared by the /_fake/ control API and --scenario files.
// Keys are snake_case; every key is optional except job "id" and alloc "job".
//
//   job:   {"namespace","id","name","type","region","datacenters","node_pool","priority","meta",
//           "periodic": "<cron>", "parameterized": bool,
//           "groups": [{"name","count","meta","network_mode","cni_args","disk_mb",
//                       "ports": [{"label","to","static"}],
//                       "services": [{"name","port","tags","meta","provider","address_mode",
//                                     "task","canary_tags",
//                                     "checks": [{"name","type","on_update"}]}],
//                       "tasks": [{"name","driver","config","meta","cpu","memory_mb"}]}]}
//   alloc: {"namespace","job","group","node","id","name_index","eval_id","deployment_id",
//           "signing_key_id","ports": {"<label>": <host port>},"previous_allocation"}
//   token: {"secret","management","namespaces","node_read","agent_read",
//           "variables": [{"namespace","path","capabilities": ["list","read",...]}]}
//          (management defaults to true only when neither namespaces nor variables are given)
//          or {"secret","policy": "<ACL policy HCL>"}: a client token holding that policy
//   variable: {"namespace","path","items": {"k": "v"}}
//   node:  {"id","name","ip","datacenter","node_pool","status","drain","meta"}
//   network status: {"address","address_ipv6","interface"}
//   scenario file: {"acl_enabled", "tokens": [...], "nodes": [...], "jobs": [...],
//                   "variables": [...],
//                   "allocs": [alloc + optional "network": {...},
//                              "services": [{"task","canary","alloc_address"}] (registered
//                              after the network report, one entry per workload) and
//                              "client_status"]}
#include <nlohmann/json.hpp>

#include "common/util/result.h"
#include "tests/fakes/nomad/fake_nomad.h"

namespace cn::fakes {

Result<JobSpec> job_spec_from_json(const nlohmann::json& j);
Result<PlaceRequest> place_request_from_json(const nlohmann::json& j);
Result<TokenSpec> token_from_json(const nlohmann::json& j);
Result<NodeRecord> node_from_json(const nlohmann::json& j);
Result<NetworkStatusSpec> network_status_from_json(const nlohmann::json& j);
// Namespace and path always; items empty when absent (a delete needs none).
Result<VariableRecord> variable_spec_from_json(const nlohmann::json& j);

}  // namespace cn::fakes
