// Scenario mutations: each one is a Raft transaction of the fake, i.e. it bumps the index,
// stamps ModifyIndex/AllocModifyIndex as Nomad's state store does, publishes the events of that
// transaction as one frame and wakes blocking queries and streams.
#include <algorithm>

#include "tests/fakes/http/status_error.h"
#include "tests/fakes/nomad/encoder.h"
#include "tests/fakes/nomad/fake_nomad.h"

namespace cn::fakes {

namespace {

std::string base64(const std::string& in) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  std::size_t i = 0;
  while (i + 2 < in.size()) {
    auto n = (static_cast<unsigned char>(in[i]) << 16) |
             (static_cast<unsigned char>(in[i + 1]) << 8) | static_cast<unsigned char>(in[i + 2]);
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += kAlphabet[(n >> 6) & 63];
    out += kAlphabet[n & 63];
    i += 3;
  }
  if (i + 1 == in.size()) {
    auto n = static_cast<unsigned char>(in[i]) << 16;
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += "==";
  } else if (i + 2 == in.size()) {
    auto n =
        (static_cast<unsigned char>(in[i]) << 16) | (static_cast<unsigned char>(in[i + 1]) << 8);
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += kAlphabet[(n >> 6) & 63];
    out += '=';
  }
  return out;
}

TaskEventRecord task_event(const std::string& type, const std::string& display,
                           const std::string& message, StringMap details, std::int64_t now,
                           int exit_code = 0) {
  return TaskEventRecord{type, display, message, std::move(details), now, exit_code};
}

bool has_event(const TaskStateRecord& s, const std::string& type) {
  return std::any_of(s.events.begin(), s.events.end(),
                     [&](const auto& e) { return e.type == type; });
}

const std::set<std::string> kJobTypes = {"service", "batch", "system", "sysbatch"};
const std::set<std::string> kClientStatuses = {"pending", "running", "complete",
                                               "failed",  "lost",    "unknown"};
// structs.ValidNodeStatus in hashicorp/nomad.
const std::set<std::string> kNodeStatuses = {"initializing", "ready", "down", "disconnected"};

}  // namespace

std::uint64_t FakeNomad::bump_locked() {
  return ++index_;
}

void FakeNomad::commit_locked(std::uint64_t index, std::vector<Event> events) {
  if (!events.empty()) events_.publish(index, std::move(events));
  wake_locked();
}

Event FakeNomad::alloc_event_locked(const Alloc& a, const std::string& type) const {
  Event e;
  e.topic = "Allocation";
  e.type = type;
  e.key = a.id;
  e.namespace_ = a.namespace_;
  e.filter_keys = std::vector<std::string>{a.job_id, a.deployment_id};
  e.payload = nlohmann::json{{"Allocation", encode_alloc(a, /*include_job=*/false)}};
  return e;
}

// ---- Jobs ----

Status FakeNomad::register_job_locked(JobSpec spec, std::uint64_t* index_out) {
  if (spec.id.empty()) return http_fail("job ID is required", 400);
  if (!kJobTypes.contains(spec.type)) return http_fail("invalid job type " + spec.type, 400);
  if (spec.namespace_.empty()) spec.namespace_ = "default";
  if (spec.name.empty()) spec.name = spec.id;
  if (spec.groups.empty()) spec.groups.push_back(GroupSpec{});
  std::set<std::string> names;
  for (auto& g : spec.groups) {
    if (!names.insert(g.name).second) return http_fail("duplicate group " + g.name, 400);
    if (g.tasks.empty()) g.tasks.push_back(TaskSpec{});
  }
  std::string key = job_key(spec.namespace_, spec.id);
  std::uint64_t idx = bump_locked();
  auto job = std::make_shared<Job>();
  if (auto it = jobs_.find(key); it != jobs_.end()) {
    *job = *it->second;
    job->version += 1;
    job->stop = false;
  } else {
    job->create_index = idx;
  }
  job->spec = std::move(spec);
  job->modify_index = idx;
  job->job_modify_index = idx;
  job->submit_time = unix_nanos(clock_.wall_now());
  // Periodic and parameterized parents never run allocs: Nomad shows them as running.
  bool parent = !job->spec.periodic_spec.empty() || job->spec.parameterized;
  job->status = parent && !job->dispatched && job->parent_id.empty() ? "running" : "pending";
  jobs_[key] = job;
  Event e;
  e.topic = "Job";
  e.type = "JobRegistered";
  e.key = job->spec.id;
  e.namespace_ = job->spec.namespace_;
  e.payload = nlohmann::json{{"Job", encode_job(*job)}};
  commit_locked(idx, {std::move(e)});
  if (index_out) *index_out = idx;
  return {};
}

Result<std::uint64_t> FakeNomad::register_job(JobSpec spec) {
  Lock lock(mu_);
  std::uint64_t idx = 0;
  if (auto st = register_job_locked(std::move(spec), &idx); !st) return std::unexpected(st.error());
  return idx;
}

Result<std::string> FakeNomad::launch_periodic(const std::string& ns, const std::string& parent,
                                               std::optional<std::int64_t> launch_unix) {
  Lock lock(mu_);
  auto it = jobs_.find(job_key(ns, parent));
  if (it == jobs_.end()) return http_fail("job not found", 404);
  if (it->second->spec.periodic_spec.empty()) return http_fail("job is not periodic", 400);
  std::int64_t unix = launch_unix.value_or(unix_nanos(clock_.wall_now()) / 1'000'000'000);
  JobSpec child = it->second->spec;
  child.id = parent + "/periodic-" + std::to_string(unix);
  child.name = child.id;
  child.periodic_spec.clear();
  if (jobs_.contains(job_key(ns, child.id))) return http_fail("job already launched", 409);
  auto seed = std::make_shared<Job>();
  seed->parent_id = parent;
  jobs_[job_key(ns, child.id)] = seed;  // register_job_locked copies ParentID from here
  std::string id = child.id;
  auto st = register_job_locked(std::move(child), nullptr);
  if (!st) return std::unexpected(st.error());
  auto& stored = jobs_[job_key(ns, id)];
  auto fixed = std::make_shared<Job>(*stored);
  fixed->version = 0;
  fixed->create_index = fixed->modify_index;
  stored = fixed;
  return id;
}

Result<std::string> FakeNomad::dispatch_job(const std::string& ns, const std::string& parent,
                                            const StringMap& meta, const std::string& payload) {
  Lock lock(mu_);
  auto it = jobs_.find(job_key(ns, parent));
  if (it == jobs_.end()) return http_fail("job not found", 404);
  if (!it->second->spec.parameterized)
    return http_fail("Specified job is not a parameterized job", 400);
  std::int64_t unix = unix_nanos(clock_.wall_now()) / 1'000'000'000;
  JobSpec child = it->second->spec;
  child.id = parent + "/dispatch-" + std::to_string(unix) + "-" + ids_.hex(8);
  child.name = child.id;
  for (const auto& [k, v] : meta) child.meta[k] = v;
  auto seed = std::make_shared<Job>();
  seed->parent_id = parent;
  seed->dispatched = true;
  seed->payload_base64 = payload.empty() ? "" : base64(payload);
  jobs_[job_key(ns, child.id)] = seed;
  std::string id = child.id;
  auto st = register_job_locked(std::move(child), nullptr);
  if (!st) return std::unexpected(st.error());
  auto& stored = jobs_[job_key(ns, id)];
  auto fixed = std::make_shared<Job>(*stored);
  fixed->version = 0;
  fixed->create_index = fixed->modify_index;
  stored = fixed;
  return id;
}

Status FakeNomad::stop_job(const std::string& ns, const std::string& id) {
  Lock lock(mu_);
  auto it = jobs_.find(job_key(ns, id));
  if (it == jobs_.end()) return http_fail("job not found", 404);
  std::uint64_t idx = bump_locked();
  auto job = std::make_shared<Job>(*it->second);
  job->stop = true;
  job->version += 1;
  job->status = "dead";
  job->modify_index = idx;
  job->job_modify_index = idx;
  it->second = job;
  Event e;
  e.topic = "Job";
  e.type = "JobDeregistered";
  e.key = id;
  e.namespace_ = ns;
  e.payload = nlohmann::json{{"Job", encode_job(*job)}};
  commit_locked(idx, {std::move(e)});
  std::vector<std::string> live;
  for (const auto& [aid, a] : allocs_) {
    if (a.namespace_ == ns && a.job_id == id && a.desired_status == "run") live.push_back(aid);
  }
  if (!live.empty()) stop_allocs_locked(live, StopOptions{});
  return {};
}

Status FakeNomad::set_job_status(const std::string& ns, const std::string& id,
                                 const std::string& status) {
  Lock lock(mu_);
  auto it = jobs_.find(job_key(ns, id));
  if (it == jobs_.end()) return http_fail("job not found", 404);
  std::uint64_t idx = bump_locked();
  auto job = std::make_shared<Job>(*it->second);
  job->status = status;
  job->modify_index = idx;
  it->second = job;
  commit_locked(idx, {});
  return {};
}

std::optional<Job> FakeNomad::job(const std::string& ns, const std::string& id) const {
  Lock lock(mu_);
  auto it = jobs_.find(job_key(ns, id));
  if (it == jobs_.end()) return std::nullopt;
  return *it->second;
}

// ---- Nodes ----

void FakeNomad::add_node(NodeRecord node) {
  Lock lock(mu_);
  std::uint64_t idx = bump_locked();
  node.create_index = node.modify_index = idx;
  if (node.datacenter.empty()) node.datacenter = cfg_.datacenter;
  nodes_[node.id] = std::move(node);
  nodes_index_ = idx;
  commit_locked(idx, {});
}

Status FakeNomad::set_node_drain(const std::string& node_id, bool drain) {
  Lock lock(mu_);
  auto it = nodes_.find(node_id);
  if (it == nodes_.end()) return http_fail("node not found", 404);
  std::uint64_t idx = bump_locked();
  it->second.drain = drain;
  it->second.modify_index = idx;
  nodes_index_ = idx;
  commit_locked(idx, {});
  return {};
}

Status FakeNomad::set_node_status(const std::string& node_id, const std::string& status) {
  if (!kNodeStatuses.contains(status)) return http_fail("invalid node status " + status, 400);
  Lock lock(mu_);
  auto it = nodes_.find(node_id);
  if (it == nodes_.end()) return http_fail("node not found", 404);
  std::uint64_t idx = bump_locked();
  it->second.status = status;
  it->second.modify_index = idx;
  nodes_index_ = idx;
  std::vector<Event> events;
  if (status == "down") events = services_on_node_down_locked(node_id, idx);
  commit_locked(idx, std::move(events));
  if (status == "down") services_after_node_down_locked(node_id);
  return {};
}

Status FakeNomad::remove_node(const std::string& node_id) {
  Lock lock(mu_);
  if (!nodes_.contains(node_id)) return http_fail("node not found", 404);
  std::uint64_t idx = bump_locked();
  nodes_.erase(node_id);
  nodes_index_ = idx;
  commit_locked(idx, {});
  return {};
}

std::optional<NodeRecord> FakeNomad::node(const std::string& node_id) const {
  Lock lock(mu_);
  auto it = nodes_.find(node_id);
  if (it == nodes_.end()) return std::nullopt;
  return it->second;
}

// ---- Allocations ----

Result<Alloc> FakeNomad::build_alloc_locked(PlaceRequest& req, std::set<int>& used_names) {
  if (req.namespace_.empty()) req.namespace_ = "default";
  auto jit = jobs_.find(job_key(req.namespace_, req.job_id));
  if (jit == jobs_.end()) return http_fail("job not found", 404);
  const auto& job = jit->second;
  if (job->stop) return http_fail("job is stopped", 400);
  if (job->parent_id.empty() && (!job->spec.periodic_spec.empty() || job->spec.parameterized)) {
    return http_fail("periodic and parameterized parents do not run allocations", 400);
  }
  if (req.group.empty()) req.group = job->spec.groups.front().name;
  const GroupSpec* group = job->group(req.group);
  if (!group) return http_fail("group not found: " + req.group, 404);
  if (req.node_id.empty()) req.node_id = cfg_.node_id;
  auto nit = nodes_.find(req.node_id);
  if (nit == nodes_.end()) return http_fail("node not found", 404);
  if (req.alloc_id.empty()) req.alloc_id = ids_.uuid();
  if (allocs_.contains(req.alloc_id))
    return http_fail("alloc already exists: " + req.alloc_id, 409);

  int name_index = 0;
  if (req.name_index) {
    name_index = *req.name_index;
  } else {
    while (used_names.contains(name_index)) ++name_index;
  }
  used_names.insert(name_index);

  Alloc a;
  a.id = req.alloc_id;
  a.namespace_ = req.namespace_;
  a.eval_id = req.eval_id.empty() ? ids_.uuid() : req.eval_id;
  a.name = job->spec.id + "." + group->name + "[" + std::to_string(name_index) + "]";
  a.node_id = nit->second.id;
  a.node_name = nit->second.name;
  a.host_ip = nit->second.ip;
  a.job_id = job->spec.id;
  a.task_group = group->name;
  a.job = job;
  if (job->spec.type == "service") {
    std::string dkey = job_key(req.namespace_, job->spec.id) + "\n" + std::to_string(job->version);
    if (!req.deployment_id.empty()) deployments_[dkey] = req.deployment_id;
    auto [dit, inserted] = deployments_.try_emplace(dkey, "");
    if (inserted) dit->second = ids_.uuid();
    a.deployment_id = dit->second;
  } else {
    a.deployment_id = req.deployment_id;
  }
  a.signing_key_id = req.signing_key_id.empty() ? signing_key_id_ : req.signing_key_id;
  for (const auto& p : group->ports) {
    if (p.static_value) continue;
    auto given = req.port_values.find(p.label);
    a.port_values[p.label] = given != req.port_values.end() ? given->second : next_port_++;
  }
  if (req.metrics) a.metrics = *req.metrics;
  a.previous_allocation = req.previous_allocation;
  std::int64_t now = unix_nanos(clock_.wall_now());
  a.create_time = a.modify_time = now;
  return a;
}

Result<std::vector<std::string>> FakeNomad::place_allocs(std::vector<PlaceRequest> requests) {
  Lock lock(mu_);
  if (requests.empty()) return std::vector<std::string>{};
  std::map<std::string, std::set<int>> used;  // job/group -> name indexes of live allocs
  for (const auto& [id, a] : allocs_) {
    if (a.terminal()) continue;
    auto open = a.name.rfind('[');
    if (open == std::string::npos) continue;
    used[job_key(a.namespace_, a.job_id) + "\n" + a.task_group].insert(
        std::stoi(a.name.substr(open + 1)));
  }
  std::vector<Alloc> built;
  for (auto& req : requests) {
    std::string ns = req.namespace_.empty() ? "default" : req.namespace_;
    auto jit = jobs_.find(job_key(ns, req.job_id));
    std::string group = req.group;
    if (group.empty() && jit != jobs_.end()) group = jit->second->spec.groups.front().name;
    auto a = build_alloc_locked(req, used[job_key(ns, req.job_id) + "\n" + group]);
    if (!a) return std::unexpected(a.error());
    for (const auto& b : built) {
      if (b.id == a->id) return http_fail("duplicate alloc ID " + a->id, 409);
    }
    built.push_back(std::move(*a));
  }
  std::uint64_t idx = bump_locked();
  std::vector<std::string> ids;
  std::vector<Event> events;
  std::set<std::string> placed_jobs;
  for (auto& a : built) {
    a.create_index = a.modify_index = a.alloc_modify_index = idx;
    events.push_back(alloc_event_locked(a, "PlanResult"));
    ids.push_back(a.id);
    placed_jobs.insert(job_key(a.namespace_, a.job_id));
    allocs_[a.id] = std::move(a);
  }
  allocs_index_ = idx;
  // The job turns running in the same transaction; allocs keep the version they were planned
  // with, which is why the reference alloc embeds a "pending" job.
  for (const auto& key : placed_jobs) {
    auto& job = jobs_[key];
    if (job->status != "running") {
      auto updated = std::make_shared<Job>(*job);
      updated->status = "running";
      updated->modify_index = idx;
      job = updated;
    }
  }
  commit_locked(idx, std::move(events));
  return ids;
}

Result<std::string> FakeNomad::place_alloc(PlaceRequest request) {
  std::vector<PlaceRequest> one;
  one.push_back(std::move(request));
  auto ids = place_allocs(std::move(one));
  if (!ids) return std::unexpected(ids.error());
  return ids->front();
}

void FakeNomad::apply_client_status_locked(Alloc& a, const std::string& status,
                                           const std::string& description) {
  static const std::map<std::string, std::string> kDescriptions = {
      {"pending", "No tasks have started"},
      {"running", "Tasks are running"},
      {"complete", "All tasks have completed"},
      {"failed", "Failed tasks"},
      {"lost", "alloc is lost since its node is down"},
      {"unknown", "alloc is unknown since its node is disconnected"}};
  a.client_status = status;
  a.client_description = description.empty() ? kDescriptions.at(status) : description;
  std::int64_t now = unix_nanos(clock_.wall_now());
  const GroupSpec* group = a.job ? a.job->group(a.task_group) : nullptr;
  if (!group || status == "lost" || status == "unknown") return;
  for (const auto& task : group->tasks) {
    auto& s = a.task_states[task.name];
    if (!has_event(s, "Received")) {
      s.events.push_back(task_event("Received", "Task received by client", "", {}, now));
    }
    if (status == "pending") {
      s.state = "pending";
      continue;
    }
    if (!has_event(s, "Task Setup")) {
      s.events.push_back(task_event("Task Setup", "Building Task Directory",
                                    "Building Task Directory",
                                    {{"message", "Building Task Directory"}}, now));
    }
    if (!has_event(s, "Started")) {
      s.events.push_back(task_event("Started", "Task started by client", "", {}, now));
      s.started_at = now;
    }
    if (status == "running") {
      s.state = "running";
      continue;
    }
    bool failed = status == "failed";
    if (!failed) {
      s.events.push_back(task_event("Killing", "Sent interrupt. Waiting 5s before force killing",
                                    "", {{"kill_timeout", "5s"}}, now));
    }
    std::string code = failed ? "1" : "0";
    s.events.push_back(task_event(
        "Terminated", "Exit Code: " + code, "",
        {{"exit_code", code}, {"exit_message", ""}, {"oom_killed", "false"}, {"signal", "0"}}, now,
        failed ? 1 : 0));
    if (failed) {
      s.events.push_back(task_event("Not Restarting", "Error was unrecoverable", "",
                                    {{"fails_task", "true"}}, now));
    } else {
      s.events.push_back(task_event("Killed", "Task successfully killed", "", {}, now));
    }
    s.state = "dead";
    s.failed = failed;
    s.finished_at = now;
  }
}

Status FakeNomad::set_network_status(const std::string& alloc_id, NetworkStatusSpec status) {
  Lock lock(mu_);
  if (!allocs_.contains(alloc_id)) return http_fail("alloc not found", 404);
  run_client_update([this, alloc_id, status] {
    auto it = allocs_.find(alloc_id);
    if (it == allocs_.end()) return;
    Alloc& a = it->second;
    std::uint64_t idx = bump_locked();
    a.network_status =
        NetworkStatusRecord{status.interface_name, status.address, status.address_ipv6};
    if (a.desired_status == "run" && !a.terminal()) {
      apply_client_status_locked(a, "running", "");
      if (a.job && a.job->spec.type == "service") {
        a.deployment_status =
            DeploymentStatusRecord{true, false, unix_nanos(clock_.wall_now()), idx};
      }
    }
    a.modify_index = idx;  // client updates leave AllocModifyIndex alone
    a.modify_time = unix_nanos(clock_.wall_now());
    allocs_index_ = idx;
    commit_locked(idx, {alloc_event_locked(a, "AllocationUpdated")});
  });
  return {};
}

Status FakeNomad::set_client_status(const std::string& alloc_id, const std::string& client_status,
                                    const std::string& description) {
  if (!kClientStatuses.contains(client_status)) {
    return http_fail("invalid client status " + client_status, 400);
  }
  Lock lock(mu_);
  if (!allocs_.contains(alloc_id)) return http_fail("alloc not found", 404);
  run_client_update([this, alloc_id, client_status, description] {
    auto it = allocs_.find(alloc_id);
    if (it == allocs_.end()) return;
    Alloc& a = it->second;
    std::uint64_t idx = bump_locked();
    apply_client_status_locked(a, client_status, description);
    a.modify_index = idx;
    a.modify_time = unix_nanos(clock_.wall_now());
    allocs_index_ = idx;
    std::vector<Event> events = {alloc_event_locked(a, "AllocationUpdated")};
    auto services = services_on_client_terminal_locked(a, idx);
    events.insert(events.end(), services.begin(), services.end());
    commit_locked(idx, std::move(events));
  });
  return {};
}

void FakeNomad::stop_allocs_locked(const std::vector<std::string>& ids,
                                   const StopOptions& options) {
  std::uint64_t idx = bump_locked();
  std::int64_t now = unix_nanos(clock_.wall_now());
  std::vector<Event> events;
  for (const auto& id : ids) {
    Alloc& a = allocs_.at(id);
    a.desired_status = "stop";
    a.desired_description = options.desired_description;
    a.modify_index = a.alloc_modify_index = idx;
    a.modify_time = now;
    events.push_back(alloc_event_locked(a, "PlanResult"));
  }
  allocs_index_ = idx;
  commit_locked(idx, std::move(events));
  if (options.client_status.empty()) return;
  // The client reports all of them in one batched update, as its 200 ms sync does.
  run_client_update([this, ids, status = options.client_status] {
    std::uint64_t update_idx = bump_locked();
    std::vector<Event> updates;
    for (const auto& id : ids) {
      auto it = allocs_.find(id);
      if (it == allocs_.end()) continue;
      Alloc& a = it->second;
      apply_client_status_locked(a, status, "");
      a.modify_index = update_idx;
      a.modify_time = unix_nanos(clock_.wall_now());
      updates.push_back(alloc_event_locked(a, "AllocationUpdated"));
      auto services = services_on_client_terminal_locked(a, update_idx);
      updates.insert(updates.end(), services.begin(), services.end());
    }
    allocs_index_ = update_idx;
    commit_locked(update_idx, std::move(updates));
  });
}

Status FakeNomad::stop_alloc(const std::string& alloc_id, StopOptions options) {
  if (!options.client_status.empty() && !kClientStatuses.contains(options.client_status)) {
    return http_fail("invalid client status " + options.client_status, 400);
  }
  Lock lock(mu_);
  auto it = allocs_.find(alloc_id);
  if (it == allocs_.end()) return http_fail("alloc not found", 404);
  if (options.via_desired_transition) {
    std::uint64_t idx = bump_locked();
    Alloc& a = it->second;
    a.desired_transition.migrate = true;
    a.modify_index = idx;  // UpdateAllocsDesiredTransitions keeps AllocModifyIndex
    a.modify_time = unix_nanos(clock_.wall_now());
    allocs_index_ = idx;
    commit_locked(idx, {alloc_event_locked(a, "AllocationUpdateDesiredStatus")});
    if (options.desired_description == StopOptions{}.desired_description) {
      options.desired_description = "alloc is being migrated";
    }
  }
  stop_allocs_locked({alloc_id}, options);
  return {};
}

std::optional<Alloc> FakeNomad::alloc(const std::string& alloc_id) const {
  Lock lock(mu_);
  auto it = allocs_.find(alloc_id);
  if (it == allocs_.end()) return std::nullopt;
  return it->second;
}

std::vector<std::string> FakeNomad::alloc_ids() const {
  Lock lock(mu_);
  std::vector<std::string> out;
  for (const auto& [id, a] : allocs_) out.push_back(id);
  return out;
}

Status FakeNomad::gc_allocs(const std::vector<std::string>& alloc_ids) {
  Lock lock(mu_);
  for (const auto& id : alloc_ids) {
    auto it = allocs_.find(id);
    if (it == allocs_.end()) return fail("alloc not found: " + id);
    // nomad/core_sched.go collects only allocations whose TerminalStatus() is true.
    if (!it->second.terminal()) return fail("alloc is not terminal: " + id);
  }
  // EvalDeleteRequestType has no entry in nomad/state/events.go MsgTypeEvents: the Raft index
  // moves but the event stream sees nothing.
  std::uint64_t idx = bump_locked();
  for (const auto& id : alloc_ids) {
    services_on_gc_locked(id, idx);
    allocs_.erase(id);
  }
  allocs_index_ = idx;
  commit_locked(idx, {});  // wakes blocking queries, which re-run and may find a lower index
  return {};
}

std::uint64_t FakeNomad::current_index() const {
  Lock lock(mu_);
  return index_;
}

void FakeNomad::skip_to_index(std::uint64_t next) {
  Lock lock(mu_);
  if (next > index_ + 1) index_ = next - 1;
}

void FakeNomad::reset_index(std::uint64_t index) {
  Lock lock(mu_);
  index_ = index;
  auto clamp = [&](std::uint64_t& v) { v = std::min(v, index); };
  for (auto& [id, a] : allocs_) {
    clamp(a.create_index);
    clamp(a.modify_index);
    clamp(a.alloc_modify_index);
    if (a.deployment_status) clamp(a.deployment_status->modify_index);
  }
  for (auto& [key, job] : jobs_) {
    auto j = std::make_shared<Job>(*job);
    clamp(j->create_index);
    clamp(j->modify_index);
    clamp(j->job_modify_index);
    job = j;
  }
  for (auto& [id, n] : nodes_) {
    clamp(n.create_index);
    clamp(n.modify_index);
  }
  clamp(nodes_index_);
  clamp(allocs_index_);
  for (auto& [key, v] : variables_) {
    clamp(v.create_index);
    clamp(v.modify_index);
  }
  clamp(variables_index_);
  services_.clamp(index);
  events_.clear();       // the broker buffer is empty after a restore
  ++stream_generation_;  // and every subscription is closed
  wake_locked();
}

}  // namespace cn::fakes
