#include "tests/fakes/nomad/encoder.h"

#include <algorithm>

#include "tests/fakes/nomad/go_values.h"

namespace cn::fakes {

using nlohmann::json;

namespace {

constexpr std::int64_t kSecond = 1'000'000'000;

// A nil Go map encodes as null; Nomad's jobspec parser leaves Meta nil when the block is absent.
json meta_json(const StringMap& meta) {
  if (meta.empty()) return nullptr;
  json out = json::object();
  for (const auto& [k, v] : meta) out[k] = v;
  return out;
}

json time_json(std::int64_t unix_nanos) {
  if (unix_nanos == 0) return nullptr;
  return rfc3339_nano(unix_nanos);
}

json opt_bool(const std::optional<bool>& b) {
  return b ? json(*b) : json(nullptr);
}

bool is_service(const Job& job) {
  return job.spec.type == "service";
}
bool is_batch(const Job& job) {
  return job.spec.type == "batch" || job.spec.type == "sysbatch";
}

json update_strategy(bool group_level) {
  return {{"AutoPromote", false},
          {"AutoRevert", false},
          {"Canary", 0},
          {"HealthCheck", group_level ? "checks" : ""},
          {"HealthyDeadline", group_level ? 300 * kSecond : 0},
          {"MaxParallel", 1},
          {"MinHealthyTime", group_level ? 10 * kSecond : 0},
          {"ProgressDeadline", group_level ? 600 * kSecond : 0},
          {"Stagger", 30 * kSecond}};
}

json zero_update_strategy() {
  return {{"AutoPromote", false}, {"AutoRevert", false},   {"Canary", 0},
          {"HealthCheck", ""},    {"HealthyDeadline", 0},  {"MaxParallel", 0},
          {"MinHealthyTime", 0},  {"ProgressDeadline", 0}, {"Stagger", 0}};
}

json restart_policy(const Job& job) {
  bool batch = is_batch(job);
  return {{"Attempts", batch ? 3 : 2},
          {"Delay", 15 * kSecond},
          {"Interval", batch ? 86400 * kSecond : 1800 * kSecond},
          {"Mode", "fail"},
          {"RenderTemplates", false}};
}

json reschedule_policy(const Job& job) {
  if (is_service(job)) {
    return {{"Attempts", 0}, {"Delay", 30 * kSecond},      {"DelayFunction", "exponential"},
            {"Interval", 0}, {"MaxDelay", 3600 * kSecond}, {"Unlimited", true}};
  }
  if (is_batch(job)) {
    return {{"Attempts", 1},
            {"Delay", 5 * kSecond},
            {"DelayFunction", "constant"},
            {"Interval", 86400 * kSecond},
            {"MaxDelay", 0},
            {"Unlimited", false}};
  }
  return nullptr;  // system jobs are never rescheduled
}

json port_json(const PortSpec& p, std::optional<int> value) {
  json out = {{"HostNetwork", "default"}, {"Label", p.label}, {"To", p.to}};
  if (value) out["Value"] = *value;
  omit_empty(out);  // Port is omitempty from 1.9.0: a dynamic port has no Value
  return out;
}

// NetworkResource is omitempty from 1.8.2, so only the fields a jobspec set appear.
json group_network(const GroupSpec& g) {
  json net = json::object();
  net["Mode"] = g.network_mode;
  if (!g.cni_args.empty()) net["CNI"] = {{"Args", meta_json(g.cni_args)}};
  json dynamic = json::array(), reserved = json::array();
  for (const auto& p : g.ports) {
    if (p.static_value) {
      reserved.push_back(port_json(p, p.static_value));
    } else {
      dynamic.push_back(port_json(p, std::nullopt));
    }
  }
  net["DynamicPorts"] = dynamic;
  net["ReservedPorts"] = reserved;
  omit_empty(net);
  return net;
}

json service_json(const ServiceSpec& s, const Job& job) {
  json tags = s.tags.empty() ? json(nullptr) : json(s.tags);
  json canary_tags = s.canary_tags.empty() ? json(nullptr) : json(s.canary_tags);
  return {{"Address", ""},
          {"AddressMode", s.address_mode},
          {"CanaryMeta", nullptr},
          {"CanaryTags", canary_tags},
          {"Checks", nullptr},
          {"Cluster", "default"},
          {"Connect", nullptr},
          {"EnableTagOverride", false},
          {"Identity", nullptr},
          {"Kind", ""},
          {"Meta", meta_json(s.meta)},
          {"Name", s.name},
          {"Namespace", job.spec.namespace_},
          {"OnUpdate", "require_healthy"},
          {"PortLabel", s.port_label},
          {"Provider", s.provider},
          {"TaggedAddresses", nullptr},
          {"Tags", tags},
          {"TaskName", s.task},
          {"Weights", nullptr}};
}

json task_resources_json(int cpu, int memory_mb) {
  return {{"CPU", cpu},       {"Cores", 0},      {"Devices", nullptr},
          {"DiskMB", 0},      {"IOPS", 0},       {"MemoryMB", memory_mb},
          {"MemoryMaxMB", 0}, {"NUMA", nullptr}, {"Networks", nullptr},
          {"SecretsMB", 0}};
}

json task_json(const TaskSpec& t, const GroupSpec& g, const Job& job) {
  json services = nullptr;
  for (const auto& s : g.services) {
    if (s.task != t.name) continue;
    if (services.is_null()) services = json::array();
    services.push_back(service_json(s, job));
  }
  json config =
      t.config.is_object() && !t.config.empty() ? t.config : json{{"image", "busybox:1.36"}};
  json identity = {{"Audience", json::array({"nomadproject.io"})},
                   {"ChangeMode", ""},
                   {"ChangeSignal", ""},
                   {"Env", false},
                   {"ExtraClaims", nullptr},
                   {"File", false},
                   {"Filepath", ""},
                   {"Name", "default"},
                   {"ServiceName", ""},
                   {"TTL", 0}};
  return {{"Actions", nullptr},
          {"Affinities", nullptr},
          {"Artifacts", nullptr},
          {"CSIPluginConfig", nullptr},
          {"Config", config},
          {"Constraints", nullptr},
          {"Consul", nullptr},
          {"DispatchPayload", nullptr},
          {"Driver", t.driver},
          {"Env", nullptr},
          {"Identities", nullptr},
          {"Identity", identity},
          {"KillSignal", ""},
          {"KillTimeout", 5 * kSecond},
          {"Kind", ""},
          {"Leader", false},
          {"Lifecycle", nullptr},
          {"LogConfig", {{"Disabled", false}, {"MaxFileSizeMB", 10}, {"MaxFiles", 10}}},
          {"Meta", meta_json(t.meta)},
          {"Name", t.name},
          {"Resources", task_resources_json(t.cpu, t.memory_mb)},
          {"RestartPolicy", restart_policy(job)},
          {"ScalingPolicies", nullptr},
          {"Schedule", nullptr},
          {"Secrets", nullptr},
          {"Services", services},
          {"ShutdownDelay", 0},
          {"Templates", nullptr},
          {"User", ""},
          {"Vault", nullptr},
          {"VolumeMounts", nullptr}};
}

json group_json(const GroupSpec& g, const Job& job) {
  json networks = nullptr;
  if (!g.network_mode.empty()) networks = json::array({group_network(g)});
  json services = nullptr;
  for (const auto& s : g.services) {
    if (!s.task.empty()) continue;  // listed under its task
    if (services.is_null()) services = json::array();
    services.push_back(service_json(s, job));
  }
  json tasks = json::array();
  for (const auto& t : g.tasks) tasks.push_back(task_json(t, g, job));
  json migrate = nullptr;
  if (is_service(job)) {
    migrate = {{"HealthCheck", "checks"},
               {"HealthyDeadline", 300 * kSecond},
               {"MaxParallel", 1},
               {"MinHealthyTime", 10 * kSecond}};
  }
  return {{"Affinities", nullptr},
          {"Constraints", nullptr},
          {"Consul", {{"Cluster", "default"}, {"Namespace", ""}, {"Partition", ""}}},
          {"Count", g.count},
          {"Disconnect", nullptr},
          {"EphemeralDisk", {{"Migrate", false}, {"SizeMB", g.disk_mb}, {"Sticky", false}}},
          {"MaxClientDisconnect", nullptr},
          {"MaxRunDuration", nullptr},
          {"Meta", meta_json(g.meta)},
          {"Migrate", migrate},
          {"Name", g.name},
          {"Networks", networks},
          {"PreventRescheduleOnLost", false},
          {"ReschedulePolicy", reschedule_policy(job)},
          {"RestartPolicy", restart_policy(job)},
          {"Scaling", nullptr},
          {"Services", services},
          {"ShutdownDelay", nullptr},
          {"Spreads", nullptr},
          {"StopAfterClientDisconnect", nullptr},
          {"Tasks", tasks},
          {"Update",
           is_service(job) || job.spec.type == "system" ? update_strategy(true) : json(nullptr)},
          {"Volumes", nullptr}};
}

// The alloc's view of its group network: ports now carry the host Value.
json alloc_network(const Alloc& a, const GroupSpec& g) {
  json net = json::object();
  net["Mode"] = g.network_mode;
  net["IP"] = a.host_ip;
  json dynamic = json::array(), reserved = json::array();
  for (const auto& p : g.ports) {
    auto it = a.port_values.find(p.label);
    std::optional<int> v = it == a.port_values.end() ? p.static_value : std::optional(it->second);
    (p.static_value ? reserved : dynamic).push_back(port_json(p, v));
  }
  net["DynamicPorts"] = dynamic;
  net["ReservedPorts"] = reserved;
  omit_empty(net);
  return net;
}

json allocated_ports(const Alloc& a, const GroupSpec& g) {
  if (g.ports.empty()) return nullptr;
  json ports = json::array();
  for (const auto& p : g.ports) {
    auto it = a.port_values.find(p.label);
    int v = it != a.port_values.end() ? it->second : p.static_value.value_or(0);
    json m = {{"HostIP", a.host_ip}, {"Label", p.label}, {"To", p.to}, {"Value", v}};
    omit_empty(m);  // AllocatedPortMapping is omitempty from 1.9.0
    ports.push_back(m);
  }
  return ports;
}

json resources_json(int cpu, int disk, int memory, int memory_max, json networks) {
  return {{"CPU", cpu},
          {"Cores", 0},
          {"Devices", nullptr},
          {"DiskMB", disk},
          {"IOPS", 0},
          {"MemoryMB", memory},
          {"MemoryMaxMB", memory_max},
          {"NUMA", nullptr},
          {"Networks", std::move(networks)},
          {"SecretsMB", 0}};
}

json task_event_json(const TaskEventRecord& e) {
  json details = json::object();
  for (const auto& [k, v] : e.details) details[k] = v;
  return {{"Details", details},
          {"DiskLimit", 0},
          {"DisplayMessage", e.display_message},
          {"DownloadError", ""},
          {"DriverError", ""},
          {"DriverMessage", ""},
          {"ExitCode", e.exit_code},
          {"FailedSibling", ""},
          {"FailsTask", false},
          {"GenericSource", ""},
          {"KillError", ""},
          {"KillReason", ""},
          {"KillTimeout", 0},
          {"Message", e.message},
          {"RestartReason", ""},
          {"SetupError", ""},
          {"Signal", 0},
          {"StartDelay", 0},
          {"TaskSignal", ""},
          {"TaskSignalReason", ""},
          {"Time", e.time},
          {"Type", e.type},
          {"ValidationError", ""},
          {"VaultError", ""}};
}

json task_states_json(const Alloc& a) {
  if (a.task_states.empty()) return nullptr;
  json out = json::object();
  for (const auto& [name, s] : a.task_states) {
    json events = json::array();
    for (const auto& e : s.events) events.push_back(task_event_json(e));
    out[name] = {{"Events", events},
                 {"Failed", s.failed},
                 {"FinishedAt", time_json(s.finished_at)},
                 {"LastRestart", nullptr},
                 {"Paused", ""},
                 {"Restarts", 0},
                 {"StartedAt", time_json(s.started_at)},
                 {"State", s.state}};
  }
  return out;
}

json deployment_status_json(const Alloc& a) {
  if (!a.deployment_status) return nullptr;
  const auto& d = *a.deployment_status;
  return {{"Canary", d.canary},
          {"Healthy", opt_bool(d.healthy)},
          {"ModifyIndex", d.modify_index},
          {"Timestamp", time_json(d.timestamp)}};
}

json desired_transition_json(const DesiredTransitionRecord& t) {
  return {{"ForceReschedule", opt_bool(t.force_reschedule)},
          {"Migrate", opt_bool(t.migrate)},
          {"MigrateDisablePlacement", opt_bool(t.migrate_disable_placement)},
          {"NoShutdownDelay", opt_bool(t.no_shutdown_delay)},
          {"Reschedule", opt_bool(t.reschedule)}};
}

json metrics_json(const Alloc& a) {
  const auto& m = a.metrics;
  std::string pool = a.job ? a.job->spec.node_pool : "default";
  std::string dc =
      a.job && !a.job->spec.datacenters.empty() ? a.job->spec.datacenters.front() : "dc1";
  json scores = {{"binpack", m.norm_score},
                 {"job-anti-affinity", 0},
                 {"node-affinity", 0},
                 {"node-reschedule-penalty", 0}};
  return {{"AllocationTime", m.allocation_time_ns},
          {"ClassExhausted", nullptr},
          {"ClassFiltered", nullptr},
          {"CoalescedFailures", 0},
          {"ConstraintFiltered", nullptr},
          {"DimensionExhausted", nullptr},
          {"NodePool", pool},
          {"NodesAvailable", {{dc, m.nodes_in_pool}}},
          {"NodesEvaluated", m.nodes_in_pool},
          {"NodesExhausted", 0},
          {"NodesFiltered", 0},
          {"NodesInPool", m.nodes_in_pool},
          {"QuotaExhausted", nullptr},
          {"ResourcesExhausted", nullptr},
          {"ScoreMetaData",
           json::array({{{"NodeID", a.node_id}, {"NormScore", m.norm_score}, {"Scores", scores}}})},
          {"Scores", nullptr}};
}

struct GroupTotals {
  int cpu = 0;
  int memory = 0;
};

GroupTotals totals(const GroupSpec& g) {
  GroupTotals t;
  for (const auto& task : g.tasks) {
    t.cpu += task.cpu;
    t.memory += task.memory_mb;
  }
  return t;
}

// Fills everything derived from the job version: resources, ports, per-task maps.
void add_resources(json& out, const Alloc& a) {
  static const GroupSpec kNoGroup;
  const GroupSpec* g = a.job ? a.job->group(a.task_group) : nullptr;
  if (!g) g = &kNoGroup;
  json nets = g->network_mode.empty() ? json(nullptr) : json::array({alloc_network(a, *g)});
  GroupTotals t = totals(*g);

  json lifecycles = json::object(), tasks = json::object(), task_resources = json::object();
  for (const auto& task : g->tasks) {
    lifecycles[task.name] = nullptr;
    tasks[task.name] = {{"Cpu", {{"CpuShares", task.cpu}, {"ReservedCores", nullptr}}},
                        {"Devices", nullptr},
                        {"Memory", {{"MemoryMB", task.memory_mb}, {"MemoryMaxMB", 0}}},
                        {"Networks", nullptr}};
    task_resources[task.name] = task_resources_json(task.cpu, task.memory_mb);
  }
  out["AllocatedResources"] = {
      {"Shared", {{"DiskMB", g->disk_mb}, {"Networks", nets}, {"Ports", allocated_ports(a, *g)}}},
      {"TaskLifecycles", lifecycles},
      {"Tasks", tasks}};
  out["Resources"] = resources_json(t.cpu, g->disk_mb, t.memory, t.memory, nets);
  out["SharedResources"] = resources_json(0, g->disk_mb, 0, 0, nets);
  out["TaskResources"] = task_resources;
}

}  // namespace

void omit_empty(json& object) {
  for (auto it = object.begin(); it != object.end();) {
    const json& v = *it;
    bool empty = v.is_null() || (v.is_string() && v.get_ref<const std::string&>().empty()) ||
                 (v.is_boolean() && !v.get<bool>()) ||
                 (v.is_number_integer() && v.get<std::int64_t>() == 0) ||
                 (v.is_number_unsigned() && v.get<std::uint64_t>() == 0) ||
                 (v.is_number_float() && v.get<double>() == 0.0) ||
                 ((v.is_array() || v.is_object()) && v.empty());
    it = empty ? object.erase(it) : std::next(it);
  }
}

json encode_job(const Job& job) {
  const auto& s = job.spec;
  json groups = json::array();
  for (const auto& g : s.groups) groups.push_back(group_json(g, job));
  json periodic = nullptr;
  if (!s.periodic_spec.empty() && job.parent_id.empty()) {
    periodic = {{"Enabled", true},    {"ProhibitOverlap", false}, {"Spec", s.periodic_spec},
                {"SpecType", "cron"}, {"Specs", nullptr},         {"TimeZone", "UTC"}};
  }
  json parameterized = nullptr;
  if (s.parameterized) {
    parameterized = {{"MetaOptional", nullptr}, {"MetaRequired", nullptr}, {"Payload", "optional"}};
  }
  return {{"Affinities", nullptr},
          {"AllAtOnce", false},
          {"Constraints", nullptr},
          {"ConsulNamespace", ""},
          {"CreateIndex", job.create_index},
          {"Datacenters", s.datacenters},
          {"DispatchIdempotencyToken", ""},
          {"Dispatched", job.dispatched},
          {"ID", s.id},
          {"JobModifyIndex", job.job_modify_index},
          {"Meta", meta_json(s.meta)},
          {"ModifyIndex", job.modify_index},
          {"Multiregion", nullptr},
          {"Name", s.name.empty() ? s.id : s.name},
          {"Namespace", s.namespace_},
          {"NodePool", s.node_pool},
          {"NomadTokenID", ""},
          {"ParameterizedJob", parameterized},
          {"ParentID", job.parent_id},
          {"Payload", job.payload_base64.empty() ? json(nullptr) : json(job.payload_base64)},
          {"Periodic", periodic},
          {"Priority", s.priority},
          {"Region", s.region},
          {"Spreads", nullptr},
          {"Stable", false},
          {"Status", job.status},
          {"StatusDescription", ""},
          {"Stop", job.stop},
          {"SubmitTime", job.submit_time},
          {"TaskGroups", groups},
          {"Type", s.type},
          {"UI", nullptr},
          {"Update", is_batch(job) ? zero_update_strategy() : update_strategy(false)},
          {"VaultNamespace", ""},
          {"Version", job.version},
          {"VersionTag", nullptr}};
}

json encode_alloc(const Alloc& a, bool include_job) {
  json out = json::object();
  out["AllocModifyIndex"] = a.alloc_modify_index;
  out["AllocStates"] = nullptr;
  add_resources(out, a);
  out["ClientDescription"] = a.client_description;
  out["ClientStatus"] = a.client_status;
  out["CreateIndex"] = a.create_index;
  out["CreateTime"] = a.create_time;
  out["DeploymentID"] = a.deployment_id;
  out["DeploymentStatus"] = deployment_status_json(a);
  out["DesiredDescription"] = a.desired_description;
  out["DesiredStatus"] = a.desired_status;
  out["DesiredTransition"] = desired_transition_json(a.desired_transition);
  out["EvalID"] = a.eval_id;
  out["FollowupEvalID"] = a.followup_eval_id;
  out["ID"] = a.id;
  out["Job"] = include_job && a.job ? encode_job(*a.job) : json(nullptr);
  out["JobID"] = a.job_id;
  out["Metrics"] = metrics_json(a);
  out["ModifyIndex"] = a.modify_index;
  out["ModifyTime"] = a.modify_time;
  out["Name"] = a.name;
  out["Namespace"] = a.namespace_;
  if (a.network_status) {
    out["NetworkStatus"] = {{"Address", a.network_status->address},
                            {"AddressIPv6", a.network_status->address_ipv6},
                            {"DNS", nullptr},
                            {"InterfaceName", a.network_status->interface_name}};
  }
  out["NextAllocation"] = a.next_allocation;
  out["NodeID"] = a.node_id;
  out["NodeName"] = a.node_name;
  out["PreemptedAllocations"] = nullptr;
  out["PreemptedByAllocation"] = "";
  out["PreviousAllocation"] = a.previous_allocation;
  out["RescheduleTracker"] = nullptr;
  out["SigningKeyID"] = a.signing_key_id;
  out["TaskGroup"] = a.task_group;
  out["TaskStates"] = task_states_json(a);

  // A value struct is "empty" when all its (pointer) fields are nil; pointers only when nil.
  const json& dt = out["DesiredTransition"];
  bool dt_empty = std::all_of(dt.begin(), dt.end(), [](const json& v) { return v.is_null(); });
  if (dt_empty) out.erase("DesiredTransition");
  omit_empty(out);
  return out;
}

json encode_alloc_stub(const Alloc& a, bool resources, bool task_states) {
  json out = {{"ClientDescription", a.client_description},
              {"ClientStatus", a.client_status},
              {"CreateIndex", a.create_index},
              {"CreateTime", a.create_time},
              {"DeploymentStatus", deployment_status_json(a)},
              {"DesiredDescription", a.desired_description},
              {"DesiredStatus", a.desired_status},
              {"DesiredTransition", desired_transition_json(a.desired_transition)},
              {"EvalID", a.eval_id},
              {"FollowupEvalID", a.followup_eval_id},
              {"ID", a.id},
              {"JobID", a.job_id},
              {"JobType", a.job ? a.job->spec.type : ""},
              {"JobVersion", a.job ? a.job->version : 0},
              {"ModifyIndex", a.modify_index},
              {"ModifyTime", a.modify_time},
              {"Name", a.name},
              {"Namespace", a.namespace_},
              {"NextAllocation", a.next_allocation},
              {"NodeID", a.node_id},
              {"NodeName", a.node_name},
              {"PreemptedAllocations", nullptr},
              {"PreemptedByAllocation", ""},
              {"RescheduleTracker", nullptr},
              {"TaskGroup", a.task_group},
              {"TaskStates", task_states ? task_states_json(a) : json(nullptr)}};
  if (resources) {
    json full = json::object();
    add_resources(full, a);
    out["AllocatedResources"] = full["AllocatedResources"];
  }
  return out;
}

namespace {

json node_attributes(const NodeRecord& n) {
  return {{"driver.docker", "1"},
          {"kernel.name", "linux"},
          {"nomad.version", "1.9.7"},
          {"os.name", "debian"},
          {"plugins.cni.version.cilium-cni", "1.16.5"},
          {"unique.hostname", n.name},
          {"unique.network.ip-address", n.ip}};
}

// A client fingerprints its drivers on start: a live node's map is never empty.
json node_drivers() {
  return {{"docker",
           {{"Attributes", {{"driver.docker", "true"}, {"driver.docker.version", "27.3.1"}}},
            {"Detected", true},
            {"HealthDescription", "Healthy"},
            {"Healthy", true},
            {"UpdateTime", "2026-11-30T09:12:44.120913871Z"}}}};
}

}  // namespace

json encode_node(const NodeRecord& n) {
  return {{"Attributes", node_attributes(n)},
          {"CSIControllerPlugins", nullptr},
          {"CSINodePlugins", nullptr},
          {"CgroupParent", "nomad.slice"},
          {"ComputedClass", "v1:1234567890"},
          {"CreateIndex", n.create_index},
          {"Datacenter", n.datacenter},
          {"Drain", n.drain},
          {"DrainStrategy", nullptr},
          {"Drivers", node_drivers()},
          {"Events", nullptr},
          {"HTTPAddr", n.ip + ":4646"},
          {"HostNetworks", nullptr},
          {"HostVolumes", nullptr},
          {"ID", n.id},
          {"LastDrain", nullptr},
          {"Links", nullptr},
          {"Meta", meta_json(n.meta)},
          {"ModifyIndex", n.modify_index},
          {"Name", n.name},
          {"NodeClass", ""},
          {"NodePool", n.node_pool},
          {"NodeResources", nullptr},
          {"Reserved", nullptr},
          {"ReservedResources", nullptr},
          {"Resources", nullptr},
          {"SchedulingEligibility", n.drain ? "ineligible" : "eligible"},
          {"SecretID", ""},
          {"Status", n.status},
          {"StatusDescription", ""},
          {"StatusUpdatedAt", 0},
          {"TLSEnabled", false}};
}

json encode_node_stub(const NodeRecord& n, bool os) {
  json stub = {{"Address", n.ip},
               {"CreateIndex", n.create_index},
               {"Datacenter", n.datacenter},
               {"Drain", n.drain},
               {"Drivers", node_drivers()},
               {"HostVolumes", nullptr},
               {"ID", n.id},
               {"LastDrain", nullptr},
               {"ModifyIndex", n.modify_index},
               {"Name", n.name},
               {"NodeClass", ""},
               {"NodePool", n.node_pool},
               {"SchedulingEligibility", n.drain ? "ineligible" : "eligible"},
               {"Status", n.status},
               {"StatusDescription", ""},
               {"Version", node_attributes(n).at("nomad.version")}};
  if (os) stub["Attributes"] = {{"os.name", node_attributes(n).at("os.name")}};
  return stub;
}

json encode_event(std::uint64_t index, const Event& e) {
  return {{"FilterKeys", e.filter_keys ? json(*e.filter_keys) : json(nullptr)},
          {"Index", index},
          {"Key", e.key},
          {"Namespace", e.namespace_},
          {"Payload", e.payload},
          {"Topic", e.topic},
          {"Type", e.type}};
}

std::string encode_event_frame(std::uint64_t index, const std::vector<Event>& events) {
  json list = json::array();
  for (const auto& e : events) list.push_back(encode_event(index, e));
  return to_wire(json{{"Events", list}, {"Index", index}}) + "\n";
}

std::string to_wire(const json& value, bool pretty) {
  if (pretty) return value.dump(4, ' ', false, json::error_handler_t::replace) + "\n";
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace cn::fakes
