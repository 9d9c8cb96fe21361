#pragma once
// What the fake stores. Specs are what a test asks for; records add what Nomad would fill in
// (indexes, times, IDs). The wire shape is produced by encoder.h, never stored.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace cn::fakes {

using StringMap = std::map<std::string, std::string>;

struct PortSpec {
  std::string label;
  int to = 0;
  std::optional<int> static_value;  // set: a ReservedPort; else a DynamicPort (no Value in the job)
};

// A Nomad-provider check: only its identity matters to the fake, results are set by the test.
struct CheckSpec {
  std::string name;
  std::string type = "http";  // http | tcp
  bool readiness = false;     // on_update = "ignore": Mode "readiness"
};

struct ServiceSpec {
  std::string name;
  std::string port_label;  // a label of the group's ports, a number, or empty
  std::vector<std::string> tags;
  StringMap meta;
  std::string provider = "nomad";
  std::string address_mode = "auto";  // auto | host | alloc
  std::string task;                   // empty: a group service; else the task that owns it
  std::vector<std::string> canary_tags;
  std::vector<CheckSpec> checks;
};

struct TaskSpec {
  std::string name = "server";
  std::string driver = "docker";
  nlohmann::json config = nlohmann::json::object();  // empty: {"image":"busybox:1.36"}
  StringMap meta;
  int cpu = 100;
  int memory_mb = 128;
};

struct GroupSpec {
  std::string name = "app";
  int count = 1;
  StringMap meta;
  std::string network_mode = "cni/cilium";  // empty: the group has no network block
  StringMap cni_args;
  std::vector<PortSpec> ports;
  std::vector<ServiceSpec> services;
  int disk_mb = 300;
  std::vector<TaskSpec> tasks;  // empty: one default task named "server"
};

struct JobSpec {
  std::string namespace_ = "default";
  std::string id;
  std::string name;              // empty: same as id
  std::string type = "service";  // service | batch | system | sysbatch
  std::string region = "global";
  std::vector<std::string> datacenters = {"dc1"};
  std::string node_pool = "default";
  int priority = 50;
  StringMap meta;
  std::vector<GroupSpec> groups;  // empty: one default group "app"
  std::string periodic_spec;      // set: a periodic parent (cron), which never gets allocs itself
  bool parameterized = false;     // a dispatchable parent
};

struct Job {
  JobSpec spec;
  std::string parent_id;
  bool dispatched = false;
  bool stop = false;
  std::string status = "pending";
  std::uint64_t version = 0;
  std::uint64_t create_index = 0;
  std::uint64_t modify_index = 0;
  std::uint64_t job_modify_index = 0;
  std::int64_t submit_time = 0;
  std::string payload_base64;  // dispatch payload; empty: null

  const GroupSpec* group(const std::string& name) const;
};

struct TaskEventRecord {
  std::string type;
  std::string display_message;
  std::string message;
  StringMap details;
  std::int64_t time = 0;
  int exit_code = 0;
};

struct TaskStateRecord {
  std::string state = "pending";
  bool failed = false;
  std::int64_t started_at = 0;  // 0: null on the wire
  std::int64_t finished_at = 0;
  std::vector<TaskEventRecord> events;
};

struct NetworkStatusRecord {
  std::string interface_name = "eth0";
  std::string address;
  std::string address_ipv6;
};

struct DeploymentStatusRecord {
  std::optional<bool> healthy;
  bool canary = false;
  std::int64_t timestamp = 0;
  std::uint64_t modify_index = 0;
};

struct DesiredTransitionRecord {
  std::optional<bool> migrate;
  std::optional<bool> reschedule;
  std::optional<bool> force_reschedule;
  std::optional<bool> no_shutdown_delay;
  std::optional<bool> migrate_disable_placement;
};

// The scheduler's placement metrics; defaults are what a 3-node dc1 cluster would report.
struct PlacementMetrics {
  std::int64_t allocation_time_ns = 213456;
  int nodes_in_pool = 3;
  double norm_score = 0.7104;
};

struct Alloc {
  std::string id;
  std::string namespace_;
  std::string eval_id;
  std::string name;
  std::string node_id;
  std::string node_name;
  std::string job_id;
  std::string task_group;
  std::shared_ptr<const Job> job;  // the job version the alloc runs (a snapshot)
  std::string desired_status = "run";
  std::string desired_description;
  DesiredTransitionRecord desired_transition;
  std::string client_status = "pending";
  std::string client_description;
  std::map<std::string, TaskStateRecord> task_states;
  std::string previous_allocation;
  std::string next_allocation;
  std::string deployment_id;
  std::optional<DeploymentStatusRecord> deployment_status;
  std::optional<NetworkStatusRecord> network_status;
  std::string followup_eval_id;
  std::string signing_key_id;
  std::string host_ip;
  std::map<std::string, int> port_values;  // label -> host port
  PlacementMetrics metrics;
  std::uint64_t create_index = 0;
  std::uint64_t modify_index = 0;
  std::uint64_t alloc_modify_index = 0;
  std::int64_t create_time = 0;
  std::int64_t modify_time = 0;

  bool terminal() const;
};

struct NodeRecord {
  std::string id;
  std::string name;
  std::string ip = "10.0.1.15";
  std::string datacenter = "dc1";
  std::string node_pool = "default";
  std::string status = "ready";
  bool drain = false;
  StringMap meta;
  std::uint64_t create_index = 1;
  std::uint64_t modify_index = 1;
};

// One event as the broker stores it; the payload is already encoded (Job stripped).
struct Event {
  std::string topic;
  std::string type;
  std::string key;
  std::string namespace_;
  std::optional<std::vector<std::string>> filter_keys;  // nullopt: null on the wire
  nlohmann::json payload;
};

}  // namespace cn::fakes
