#include "tests/unit/labeler/in_memory_apis.h"

#include <algorithm>

#include "common/cilium/model/agent_cluster.h"
#include "common/http/http_types.h"

namespace cn::testing {

const std::vector<std::string> kWebLabels = {
    "k8s:io.cilium.k8s.policy.cluster=default", "k8s:io.kubernetes.pod.namespace=default",
    "nomad:nomad.group=app", "nomad:nomad.job=web", "nomad:nomad.namespace=default"};

state::StateEntry plugin_entry(const std::string& ip) {
  state::StateEntry e;
  e.ifname = "eth0";
  e.ips = {ip};
  return e;
}

Status record_plugin_add(state::StateStore& store, const std::string& alloc_id,
                         state::StateEntry entry) {
  return store.update_entry(
      alloc_id,
      [&](std::optional<state::StateEntry>& e) {
        e = std::move(entry);
        return true;
      },
      state::StateStore::Creation::allowed);
}

nomad::Allocation make_alloc(const std::string& id, const std::string& job,
                             const std::string& group, const std::string& client_status) {
  nomad::Allocation a;
  a.id = id;
  a.nomad_namespace = "default";
  a.job_id = job;
  a.task_group = group;
  a.name = job + "." + group + "[0]";
  a.node_id = "f2c1e0b9-3a4d-5e6f-7a8b-9c0d1e2f3a4b";
  a.client_status = client_status;
  a.desired_status = "run";
  a.modify_index = 1240;
  nomad::Job j;
  j.id = job;
  j.nomad_namespace = "default";
  j.type = "service";
  j.meta = {{"team", "payments"}};
  nomad::TaskGroup tg;
  tg.name = group;
  tg.meta = {{"tier", "frontend"}};
  j.task_groups.push_back(tg);
  a.job = j;
  return a;
}

// ---- Nomad

void InMemoryNomad::put(nomad::Allocation alloc) {
  std::lock_guard lock(mu_);
  table_index_ = std::max(table_index_, alloc.modify_index);
  allocs_[alloc.id] = std::move(alloc);
  cv_.notify_all();
}

void InMemoryNomad::remove(const std::string& alloc_id, std::uint64_t gc_index) {
  std::lock_guard lock(mu_);
  allocs_.erase(alloc_id);
  table_index_ = std::max(table_index_, gc_index);
  cv_.notify_all();
}

void InMemoryNomad::set_blocking(bool blocking) {
  std::lock_guard lock(mu_);
  blocking_ = blocking;
  cv_.notify_all();
}

void InMemoryNomad::expire_blocking() {
  std::lock_guard lock(mu_);
  ++expire_generation_;
  cv_.notify_all();
}

void InMemoryNomad::set_index(std::optional<std::uint64_t> index) {
  std::lock_guard lock(mu_);
  index_override_ = index;
  cv_.notify_all();
}

std::vector<std::uint64_t> InMemoryNomad::node_allocation_indexes() const {
  std::lock_guard lock(mu_);
  return node_indexes_;
}

std::vector<std::vector<std::string>> InMemoryNomad::node_allocation_jobs() const {
  std::lock_guard lock(mu_);
  return node_jobs_;
}

int InMemoryNomad::blocked() const {
  std::lock_guard lock(mu_);
  return blocked_;
}

bool InMemoryNomad::wait_for_blocked(int n, std::chrono::milliseconds timeout) const {
  std::unique_lock lock(mu_);
  return cv_.wait_for(lock, timeout, [&] { return blocked_ >= n; });
}

std::uint64_t InMemoryNomad::node_index_locked(std::string_view node) const {
  if (index_override_) return *index_override_;
  // Node.GetAllocs (nomad/node_endpoint.go): the max ModifyIndex of the node's allocations, or the
  // allocs table index when it has none left.
  std::optional<std::uint64_t> index;
  for (const auto& [id, a] : allocs_) {
    if (a.node_id == node) index = std::max(index.value_or(0), a.modify_index);
  }
  return index.value_or(table_index_);
}

void InMemoryNomad::script_stream(StreamScript script) {
  std::lock_guard lock(mu_);
  scripts_.push_back(std::move(script));
}

void InMemoryNomad::push_stream_line(std::string line) {
  std::lock_guard lock(mu_);
  live_lines_.push_back(std::move(line));
  cv_.notify_all();
}

void InMemoryNomad::close_stream(std::optional<Error> end) {
  std::lock_guard lock(mu_);
  live_open_ = false;
  live_end_ = std::move(end);
  cv_.notify_all();
}

std::vector<nomad::EventStreamQuery> InMemoryNomad::stream_queries() const {
  std::lock_guard lock(mu_);
  return stream_queries_;
}

bool InMemoryNomad::wait_for_streams(std::size_t n, std::chrono::milliseconds timeout) const {
  std::unique_lock lock(mu_);
  return cv_.wait_for(lock, timeout, [&] { return stream_queries_.size() >= n; });
}

bool InMemoryNomad::stream_open() const {
  std::lock_guard lock(mu_);
  return live_open_;
}

void InMemoryNomad::fail_next(int n, int code) {
  fail_next_with(n, code, "No cluster leader");
}

void InMemoryNomad::fail_next_with(int n, int code, std::string message) {
  std::lock_guard lock(mu_);
  fail_left_ = n;
  fail_code_ = code;
  fail_message_ = std::move(message);
}

int InMemoryNomad::calls(NomadCall call) const {
  std::lock_guard lock(mu_);
  auto it = calls_.find(call);
  return it == calls_.end() ? 0 : it->second;
}

void InMemoryNomad::fail_call(NomadCall call, int n, int code, std::string message) {
  std::lock_guard lock(mu_);
  call_failures_[call] = CallFailure{n, code, std::move(message)};
}

std::optional<Error> InMemoryNomad::injected(NomadCall call) {
  ++calls_[call];
  if (auto it = call_failures_.find(call); it != call_failures_.end() && it->second.left > 0) {
    --it->second.left;
    return http_error(it->second.code, it->second.message);
  }
  if (fail_left_ == 0) return std::nullopt;
  --fail_left_;
  if (fail_code_ == kFailTimeout) return Error{ErrorKind::timeout, "deadline passed", 0, 0};
  return fail_code_ == 0 ? Error{ErrorKind::transport, "connection refused", 0, 0}
                         : http_error(fail_code_, fail_message_);
}

void InMemoryNomad::put_variable(const std::string& ns, const std::string& path,
                                 std::map<std::string, std::string> items) {
  std::lock_guard lock(mu_);
  auto& var = variables_[{ns, path}];
  var.meta = {ns, path, ++variables_index_};
  var.items = std::move(items);
}

void InMemoryNomad::delete_variable(const std::string& ns, const std::string& path) {
  std::lock_guard lock(mu_);
  if (variables_.erase({ns, path}) > 0) ++variables_index_;
}

Result<nomad::Indexed<std::vector<nomad::VariableMeta>>> InMemoryNomad::variables(
    std::string_view ns, std::string_view prefix, std::uint64_t index, std::chrono::seconds,
    MonoTime deadline, std::stop_token) {
  std::lock_guard lock(mu_);
  variables_calls_.emplace_back(index, deadline);
  if (auto e = injected(NomadCall::variables)) return std::unexpected(*e);
  nomad::Indexed<std::vector<nomad::VariableMeta>> out;
  out.index = std::max<std::uint64_t>(variables_index_, 1);
  for (const auto& [key, var] : variables_) {
    // "*": every namespace, like Nomad's wildcard list.
    if ((ns == "*" || key.first == ns) && key.second.starts_with(prefix) &&
        !hidden_from_list.contains(key.second))
      out.value.push_back(var.meta);
  }
  return out;
}

std::vector<std::pair<std::uint64_t, MonoTime>> InMemoryNomad::variables_calls() const {
  std::lock_guard lock(mu_);
  return variables_calls_;
}

Result<nomad::Variable> InMemoryNomad::variable(std::string_view ns, std::string_view path,
                                                Deadline) {
  std::lock_guard lock(mu_);
  if (auto e = injected(NomadCall::variable)) return std::unexpected(*e);
  auto it = variables_.find({std::string(ns), std::string(path)});
  if (it == variables_.end()) return std::unexpected(http_error(404, "variable not found"));
  return it->second;
}

void InMemoryNomad::set_nodes(std::vector<nomad::NodeStub> nodes) {
  std::lock_guard lock(mu_);
  nodes_ = std::move(nodes);
}

void InMemoryNomad::set_node_status(const std::string& id, const std::string& status) {
  std::lock_guard lock(mu_);
  auto it = std::find_if(nodes_.begin(), nodes_.end(), [&](const auto& n) { return n.id == id; });
  if (it == nodes_.end()) {
    nodes_.push_back({id, id, status});
  } else {
    it->status = status;
  }
}

void InMemoryNomad::remove_node(const std::string& id) {
  std::lock_guard lock(mu_);
  std::erase_if(nodes_, [&](const auto& n) { return n.id == id; });
}

Result<std::vector<nomad::NodeStub>> InMemoryNomad::nodes(Deadline) {
  std::lock_guard lock(mu_);
  if (auto e = injected(NomadCall::nodes)) return std::unexpected(*e);
  return nodes_;
}

Result<std::string> InMemoryNomad::local_node_id(Deadline) {
  std::lock_guard lock(mu_);
  if (auto e = injected(NomadCall::agent_self)) return std::unexpected(*e);
  return node_id;
}

Result<nomad::Allocation> InMemoryNomad::allocation(std::string_view id, Deadline) {
  std::lock_guard lock(mu_);
  if (auto e = injected(NomadCall::allocation)) return std::unexpected(*e);
  auto it = allocs_.find(std::string(id));
  if (it == allocs_.end()) return std::unexpected(http_error(404, "alloc not found"));
  return it->second;
}

Result<nomad::Job> InMemoryNomad::job(std::string_view, std::string_view, Deadline) {
  std::lock_guard lock(mu_);
  if (auto e = injected(NomadCall::job)) return std::unexpected(*e);
  return std::unexpected(http_error(404, "job not found"));
}

Result<nomad::Indexed<nomad::AllocationList>> InMemoryNomad::node_allocations(
    std::string_view node, std::uint64_t index, std::chrono::seconds, MonoTime, std::stop_token,
    const nomad::AllocationSelector& with_job) {
  std::unique_lock lock(mu_);
  node_indexes_.push_back(index);
  if (auto e = injected(NomadCall::node_allocations)) return std::unexpected(*e);
  if (blocking_ && index > 0) {
    // Like Nomad: wake when the node's index passes the asked one, or when the wait "expires".
    // The real-time bound only keeps a broken test from hanging.
    const std::uint64_t generation = expire_generation_;
    ++blocked_;
    cv_.notify_all();
    cv_.wait_for(lock, std::chrono::seconds{30}, [&] {
      return !blocking_ || expire_generation_ != generation || node_index_locked(node) > index;
    });
    --blocked_;
    cv_.notify_all();
  }
  nomad::Indexed<nomad::AllocationList> out;
  std::vector<std::string>& with_jobs = node_jobs_.emplace_back();
  for (const auto& [id, a] : allocs_) {
    if (a.node_id != node) continue;
    out.value.allocations.push_back(a);
    // As the real decode does: a refused allocation comes without its Job.
    if (with_job && !with_job(a.id, a.modify_index)) {
      out.value.allocations.back().job.reset();
      out.value.allocations.back().job_modify_index.reset();
    } else if (a.job) {
      with_jobs.push_back(a.id);
    }
  }
  out.index = node_index_locked(node);
  return out;
}

Status InMemoryNomad::event_stream(const nomad::EventStreamQuery& query,
                                   const std::function<bool(std::string_view)>& on_line,
                                   std::chrono::milliseconds, std::stop_token stop) {
  std::unique_lock lock(mu_);
  stream_queries_.push_back(query);
  cv_.notify_all();
  if (auto e = injected(NomadCall::event_stream)) return std::unexpected(*e);
  if (scripts_.empty())
    return fail(ErrorKind::transport, "connection refused (no scripted stream)");
  StreamScript script = std::move(scripts_.front());
  scripts_.pop_front();
  live_lines_.clear();
  live_end_.reset();
  live_open_ = script.hold_open;
  cv_.notify_all();
  for (const auto& line : script.lines) {
    lock.unlock();
    bool go = on_line(line);
    lock.lock();
    if (!go) {
      live_open_ = false;
      return {};
    }
  }
  if (!script.hold_open) {
    if (script.end) return std::unexpected(*script.end);
    return {};
  }
  while (true) {
    cv_.wait(lock, stop, [&] { return !live_lines_.empty() || !live_open_; });
    if (stop.stop_requested()) {
      live_open_ = false;
      return {};
    }
    if (!live_lines_.empty()) {
      std::string line = std::move(live_lines_.front());
      live_lines_.pop_front();
      lock.unlock();
      bool go = on_line(line);
      lock.lock();
      if (!go) {
        live_open_ = false;
        cv_.notify_all();
        return {};
      }
      continue;
    }
    if (live_end_) return std::unexpected(*live_end_);
    return {};
  }
}

// ---- Cilium

long long InMemoryCilium::add_init_endpoint(const std::string& alloc_id, const std::string& ip,
                                            const std::string& ifname) {
  std::lock_guard lock(mu_);
  cilium::Endpoint ep;
  ep.id = next_endpoint_++;
  ep.state = "ready";
  ep.identity_id = 5;
  ep.identity_labels = {"reserved:init"};
  ep.security_relevant_labels = {"reserved:init"};
  ep.cni_attachment_id = alloc_id + ":" + ifname;
  ep.container_id = alloc_id;
  ep.addressing.push_back({ip, ""});
  eps_[ep.id] = ep;
  return ep.id;
}

void InMemoryCilium::add_reserved_endpoints() {
  std::lock_guard lock(mu_);
  cilium::Endpoint host;
  host.id = 1;
  host.state = "ready";
  host.identity_id = 1;
  host.identity_labels = {"reserved:host"};
  eps_[1] = host;
  cilium::Endpoint health;
  health.id = 2;
  health.state = "ready";
  health.identity_id = 4;
  health.identity_labels = {"reserved:health"};
  health.addressing.push_back({"10.200.0.9", ""});
  eps_[2] = health;
}

cilium::Endpoint InMemoryCilium::get(long long id) const {
  std::lock_guard lock(mu_);
  return eps_.at(id);
}

void InMemoryCilium::set_identity_labels(long long id, std::vector<std::string> labels) {
  std::lock_guard lock(mu_);
  std::sort(labels.begin(), labels.end());
  auto& ep = eps_.at(id);
  ep.identity_labels = labels;
  ep.security_relevant_labels = labels;
  ep.identity_id = identity_for(labels);
}

void InMemoryCilium::set_filtered_labels(long long id, std::vector<std::string> labels) {
  std::lock_guard lock(mu_);
  std::sort(labels.begin(), labels.end());
  eps_.at(id).derived_labels = std::move(labels);
}

int InMemoryCilium::calls(CiliumCall call) const {
  std::lock_guard lock(mu_);
  auto it = calls_.find(call);
  return it == calls_.end() ? 0 : it->second;
}

void InMemoryCilium::fail_next(CiliumCall call, int n, int code) {
  std::lock_guard lock(mu_);
  failures_[call] = {n, code};
}

void InMemoryCilium::renumber(long long id, long long new_id) {
  std::lock_guard lock(mu_);
  auto node = eps_.extract(id);
  node.key() = new_id;
  node.mapped().id = new_id;
  eps_.insert(std::move(node));
}

void InMemoryCilium::hold_writes(bool hold) {
  {
    std::lock_guard lock(mu_);
    holding_ = hold;
  }
  held_cv_.notify_all();
}

bool InMemoryCilium::wait_for_held_writes(int n) {
  std::unique_lock lock(mu_);
  return held_cv_.wait_for(lock, std::chrono::seconds{10}, [&] { return held_ >= n; });
}

std::optional<Error> InMemoryCilium::injected(CiliumCall call) {
  ++calls_[call];
  auto it = failures_.find(call);
  if (it == failures_.end() || it->second.first == 0) return std::nullopt;
  --it->second.first;
  const int code = it->second.second;
  return code == 0 ? Error{ErrorKind::transport, "injected", 0, 0}
                   : http_error(code, code == 429 ? "request would have to wait" : "injected");
}

long long InMemoryCilium::identity_for(const std::vector<std::string>& labels) {
  auto [it, inserted] =
      identities_.try_emplace(labels, 256 + static_cast<long long>(identities_.size()));
  return it->second;
}

std::optional<long long> InMemoryCilium::lookup(const cilium::EndpointRef& ref) const {
  for (const auto& [id, ep] : eps_) {
    switch (ref.kind()) {
      case cilium::EndpointIdKind::local:
        if (std::to_string(id) == ref.value()) return id;
        break;
      case cilium::EndpointIdKind::cni_attachment:
        if (ep.cni_attachment_id == ref.value()) return id;
        break;
      case cilium::EndpointIdKind::container_id:
        if (ep.container_id == ref.value()) return id;
        break;
      case cilium::EndpointIdKind::ipv4:
      case cilium::EndpointIdKind::ipv6:
        for (const auto& a : ep.addressing) {
          if (a.ipv4 == ref.value() || a.ipv6 == ref.value()) return id;
        }
        break;
    }
  }
  return std::nullopt;
}

void InMemoryCilium::resolve_pending() {
  if (pending_.empty() || gets_since_write_ < gets_until_resolved) return;
  for (auto& [id, labels] : pending_) {
    auto& ep = eps_.at(id);
    ep.identity_labels = labels;
    ep.security_relevant_labels = labels;
    ep.identity_id = identity_for(labels);
  }
  pending_.clear();
}

Status InMemoryCilium::ready(Deadline) {
  std::lock_guard lock(mu_);
  if (auto e = injected(CiliumCall::config)) return std::unexpected(*e);
  return {};
}

void InMemoryCilium::set_healthz_body(std::string body) {
  std::lock_guard lock(mu_);
  healthz_body_ = std::move(body);
}

Result<std::string> InMemoryCilium::cluster_name(Deadline) {
  std::lock_guard lock(mu_);
  if (auto e = injected(CiliumCall::healthz)) return std::unexpected(*e);
  return http::refused_answer(cilium::parse_cluster_name(healthz_body_));
}

Result<cilium::Endpoint> InMemoryCilium::endpoint(const cilium::EndpointRef& ref, Deadline) {
  std::lock_guard lock(mu_);
  if (auto e = injected(CiliumCall::get)) return std::unexpected(*e);
  if (ref.kind() == cilium::EndpointIdKind::cni_attachment && !knows_attachment_prefix) {
    return std::unexpected(http_error(400, "unknown endpoint ID prefix \"cni-attachment-id\""));
  }
  ++gets_since_write_;
  resolve_pending();
  auto id = lookup(ref);
  if (!id) return std::unexpected(http_error(404, "endpoint not found"));
  return eps_.at(*id);
}

Result<cilium::EndpointList> InMemoryCilium::endpoints(Deadline) {
  std::lock_guard lock(mu_);
  if (auto e = injected(CiliumCall::list)) return std::unexpected(*e);
  cilium::EndpointList out;
  for (const auto& [id, ep] : eps_) out.endpoints.push_back(ep);
  return out;
}

MonoTime InMemoryCilium::last_write_deadline() const {
  std::lock_guard lock(mu_);
  return last_write_deadline_;
}

Status InMemoryCilium::replace_identity_labels(const cilium::EndpointRef& ref,
                                               const std::vector<std::string>& labels,
                                               Deadline deadline) {
  std::unique_lock lock(mu_);
  last_write_deadline_ = deadline.at;
  ++held_;
  held_cv_.notify_all();
  const bool served = held_cv_.wait(lock, deadline.stop, [&] { return !holding_; });
  --held_;
  if (!served) return fail(ErrorKind::cancelled, "stopped while waiting in the agent's limiter");
  if (auto e = injected(CiliumCall::patch_endpoint)) return std::unexpected(*e);
  if (!endpoint_patch_supported) return std::unexpected(http_error(405, "method not allowed"));
  auto id = lookup(ref);
  if (!id) return std::unexpected(http_error(404, "endpoint not found"));
  auto sorted = labels;
  std::sort(sorted.begin(), sorted.end());
  // Like the agent: the orchestration labels change at once, the identity after resolution.
  eps_.at(*id).security_relevant_labels = sorted;
  pending_[*id] = sorted;
  gets_since_write_ = 0;
  resolve_pending();
  return {};
}

Status InMemoryCilium::set_user_labels(const cilium::EndpointRef& ref,
                                       const std::vector<std::string>& labels, Deadline) {
  std::lock_guard lock(mu_);
  if (auto e = injected(CiliumCall::patch_labels)) return std::unexpected(*e);
  auto id = lookup(ref);
  if (!id) return std::unexpected(http_error(404, "endpoint not found"));
  auto& ep = eps_.at(*id);
  auto sorted = labels;
  std::sort(sorted.begin(), sorted.end());
  // The agent's quirk: init goes only when the request changes nothing.
  bool no_change = ep.realized_user_labels == sorted;
  ep.realized_user_labels = sorted;
  std::vector<std::string> identity = sorted;
  bool init = std::find(ep.identity_labels.begin(), ep.identity_labels.end(), "reserved:init") !=
              ep.identity_labels.end();
  if (init && !no_change) identity.push_back("reserved:init");
  std::sort(identity.begin(), identity.end());
  ep.identity_labels = identity;
  ep.identity_id = identity_for(identity);
  return {};
}

Status InMemoryCilium::delete_endpoint(const cilium::EndpointRef& ref, Deadline) {
  std::lock_guard lock(mu_);
  if (auto e = injected(CiliumCall::del)) return std::unexpected(*e);
  auto id = lookup(ref);
  if (!id) return std::unexpected(http_error(404, "endpoint not found"));
  eps_.erase(*id);
  return {};
}

}  // namespace cn::testing
