// The /v1 read endpoints a labeler uses, with Nomad's blocking-query and ACL behaviour.
#include <algorithm>

#include "tests/fakes/nomad/encoder.h"
#include "tests/fakes/nomad/fake_nomad.h"
#include "tests/fakes/nomad/filter_expr.h"
#include "tests/fakes/nomad/http_util.h"

namespace cn::fakes {

using nlohmann::json;

namespace {

HttpResponse permission_denied() {
  return text_error(403, "Permission denied");
}

std::string join_from(const std::vector<std::string>& s, std::size_t first) {
  std::string out;
  for (std::size_t i = first; i < s.size(); ++i) out += (i > first ? "/" : "") + s[i];
  return out;
}

}  // namespace

const TokenSpec* FakeNomad::token_locked(const HttpRequest& request, bool& denied) const {
  denied = false;
  if (!acl_enabled_) return nullptr;
  std::string secret;
  if (auto h = request.header("X-Nomad-Token"); h && !h->empty()) {
    secret = *h;
  } else if (auto a = request.header("Authorization"); a && a->starts_with("Bearer ")) {
    secret = a->substr(7);
  }
  auto it = tokens_.find(secret);
  if (secret.empty() || it == tokens_.end()) {
    denied = true;
    return nullptr;
  }
  return &it->second;
}

const AclObject* FakeNomad::acl_locked(const TokenSpec* token) const {
  if (!acl_enabled_ || !token || token->management) return nullptr;
  auto it = acls_.find(token->secret);
  return it == acls_.end() ? nullptr : &it->second;
}

bool FakeNomad::allow_ns_op_locked(const TokenSpec* token, const std::string& ns,
                                   const std::string& op) const {
  const AclObject* acl = acl_locked(token);
  return !acl || acl->allow_ns_op(ns, op);
}

bool FakeNomad::allow_node_read_locked(const TokenSpec* token) const {
  const AclObject* acl = acl_locked(token);
  return !acl || acl->allow_node_read();
}

bool FakeNomad::allow_agent_read_locked(const TokenSpec* token) const {
  const AclObject* acl = acl_locked(token);
  return !acl || acl->allow_agent_read();
}

void FakeNomad::record_denial_locked(const HttpRequest& request, std::string reason, bool silent) {
  denials_.push_back(
      AclDenial{route_of(path_segments(request.raw_path.empty() ? request.path : request.raw_path)),
                request.method, request.target, std::move(reason), silent});
}

// Every alloc endpoint checks read-job (nomad/alloc_endpoint.go, nomad/node_endpoint.go
// GetAllocs, nomad/job_endpoint.go GetJob).
bool FakeNomad::can_read_ns_locked(const TokenSpec* token, const std::string& ns) const {
  return allow_ns_op_locked(token, ns, "read-job");
}

HttpResponse FakeNomad::route_v1(const HttpRequest& request, const std::vector<std::string>& s) {
  std::string route = route_of(s);
  if (route == "unknown") return text_error(404, "404 page not found\n");
  // The variables endpoints take writes, so they answer their own methods.
  if (route == "variables") return variables_list(request);
  if (route == "variable") return variable_request(request, join_from(s, 2));
  // /v1/service/ answers its own methods (GET a name, DELETE an ID).
  if (route == "service") return service_request(request);
  if (request.method != "GET" && request.method != "HEAD") {
    return text_error(405, "Invalid method");
  }
  if (route == "agent_self") return agent_self(request);
  if (route == "nodes") return nodes_list(request);
  if (route == "node") return node_get(request, s[2]);
  if (route == "node_allocations") return node_allocations(request, s[2]);
  if (route == "allocation") return allocation_get(request, s[2]);
  if (route == "allocations") return allocations_list(request);
  if (route == "job") return job_get(request, join_from(s, 2));
  if (route == "services") return services_list(request);
  if (route == "allocation_services") return allocation_services(request, s[2]);
  if (route == "job_services") {
    return job_services(request, join_from(std::vector<std::string>(s.begin(), s.end() - 1), 2));
  }
  if (route == "allocation_checks") return allocation_checks(request, s[s.size() - 2]);
  return event_stream(request);
}

// Nomad's blockingRPC: re-run the query until its index passes ?index or the wait (capped at
// 300 s, plus up to wait/16 jitter) runs out; a timeout answers 200 with the current index.
HttpResponse FakeNomad::blocking_query(const HttpRequest& request,
                                       const std::function<QueryOut()>& query,
                                       const std::function<std::uint64_t()>& watch) {
  std::uint64_t min_index = 0;
  if (auto v = request.query_value("index"); v && !v->empty()) {
    try {
      std::size_t used = 0;
      min_index = std::stoull(*v, &used);
      if (used != v->size() || v->front() == '-') return text_error(400, "Invalid index");
    } catch (const std::exception&) {
      return text_error(400, "Invalid index");
    }
  }
  std::chrono::nanoseconds wait = cfg_.max_wait;
  if (auto v = request.query_value("wait"); v && !v->empty()) {
    auto d = parse_go_duration(*v);
    if (!d) return text_error(400, "Invalid wait time");
    if (d->count() > 0 && *d < cfg_.max_wait) wait = *d;
  }
  Lock lock(mu_);
  if (cfg_.blocking_jitter && wait.count() >= 16) {
    std::uniform_int_distribution<std::int64_t> jitter(0, wait.count() / 16);
    wait += std::chrono::nanoseconds{jitter(jitter_rng_)};
  }
  MonoTime deadline = clock_.now() + std::chrono::duration_cast<MonoTime::duration>(wait);
  QueryOut out = query();
  while (min_index > 0 && !out.error && out.index <= min_index && !stopping_) {
    ++blocked_;
    highest_parked_index_ = std::max(highest_parked_index_, min_index);
    note_observed();
    const std::uint64_t watched = watch ? watch() : 0;
    bool woken = false;
    // A change outside the watched set leaves the query parked even when the index it would
    // answer has moved past ?index (nomad/rpc.go blockingRPC waits on the watch set only).
    do {
      woken = wait_change(lock, deadline);
      out = query();
    } while (woken && watch && watch() == watched && !out.error && !stopping_);
    --blocked_;
    if (!woken) break;
  }
  if (out.error) return *out.error;
  if (out.missing) return *out.missing;
  nlohmann::json body = out.body ? out.body() : nlohmann::json(nullptr);
  lock.unlock();
  return json_reply(request, body, out.index);
}

HttpResponse FakeNomad::agent_self(const HttpRequest& request) {
  Lock lock(mu_);
  bool denied = false;
  const TokenSpec* token = token_locked(request, denied);
  if (denied || !allow_agent_read_locked(token)) {
    record_denial_locked(request, denied ? "ACL token not found" : "agent read");
    return permission_denied();
  }
  int allocs_here =
      static_cast<int>(std::count_if(allocs_.begin(), allocs_.end(), [&](const auto& kv) {
        return kv.second.node_id == cfg_.node_id && !kv.second.terminal();
      }));
  json body = {{"config",
                {{"ACL", {{"Enabled", acl_enabled_}}},
                 {"Client", {{"Enabled", true}, {"NodeClass", ""}, {"NodePool", "default"}}},
                 {"Datacenter", cfg_.datacenter},
                 {"NodeName", cfg_.node_name},
                 {"Region", cfg_.region},
                 {"Server", {{"Enabled", false}}},
                 {"Version",
                  {{"Revision", ""},
                   {"Version", cfg_.version},
                   {"VersionMetadata", ""},
                   {"VersionPrerelease", ""}}}}},
               // A client-only agent has no serf member: every field is its zero value.
               {"member",
                {{"Addr", ""},
                 {"DelegateCur", 0},
                 {"DelegateMax", 0},
                 {"DelegateMin", 0},
                 {"Name", ""},
                 {"Port", 0},
                 {"ProtocolCur", 0},
                 {"ProtocolMax", 0},
                 {"ProtocolMin", 0},
                 {"Status", ""},
                 {"Tags", nullptr}}},
               {"stats",
                {{"client",
                  {{"heartbeat_ttl", "17.5s"},
                   {"known_servers", "127.0.0.1:4647"},
                   {"last_heartbeat", "3.2s"},
                   {"node_id", cfg_.node_id},
                   {"num_allocations", std::to_string(allocs_here)}}},
                 {"runtime", {{"arch", "amd64"}, {"version", "go1.22.7"}}}}}};
  lock.unlock();
  return json_reply(request, body, std::nullopt);
}

// Node.List: node:read, the nodes table index, ?prefix on the ID, pages of ?per_page keyed by
// node ID (X-Nomad-NextToken is the first ID of the next page), ?os adds Attributes.
HttpResponse FakeNomad::nodes_list(const HttpRequest& request) {
  std::size_t per_page = 0;
  if (auto v = request.query_value("per_page"); v && !v->empty()) {
    try {
      per_page = std::stoul(*v);
    } catch (const std::exception&) {
      return text_error(400, "Invalid per_page value");
    }
  }
  const std::string prefix = request.query_value("prefix").value_or("");
  const std::string next_token = request.query_value("next_token").value_or("");
  const bool os = query_flag(request, "os");

  std::string next_out;
  HttpResponse response = blocking_query(request, [&]() -> QueryOut {
    bool denied = false;
    const TokenSpec* token = token_locked(request, denied);
    if (denied || !allow_node_read_locked(token)) {
      record_denial_locked(request, denied ? "ACL token not found" : "node read");
      return {0, {}, permission_denied(), std::nullopt};
    }
    auto build = [&]() -> json {
      json list = json::array();
      next_out.clear();
      for (auto it = nodes_.lower_bound(std::max(prefix, next_token)); it != nodes_.end(); ++it) {
        if (!it->first.starts_with(prefix)) break;
        if (per_page > 0 && list.size() == per_page) {
          next_out = it->first;
          break;
        }
        list.push_back(encode_node_stub(it->second, os));
      }
      return list;
    };
    return {nodes_index_, build, std::nullopt, std::nullopt};
  });
  if (!next_out.empty()) response.headers.emplace_back("X-Nomad-Nexttoken", next_out);
  return response;
}

HttpResponse FakeNomad::node_get(const HttpRequest& request, const std::string& id) {
  return blocking_query(request, [&]() -> QueryOut {
    bool denied = false;
    const TokenSpec* token = token_locked(request, denied);
    if (denied || !allow_node_read_locked(token)) {
      record_denial_locked(request, denied ? "ACL token not found" : "node read");
      return {0, {}, permission_denied(), std::nullopt};
    }
    auto it = nodes_.find(id);
    if (it == nodes_.end()) return {index_, {}, std::nullopt, text_error(404, "node not found")};
    const NodeRecord& node = it->second;
    return {node.modify_index, [&node] { return encode_node(node); }, std::nullopt, std::nullopt};
  });
}

HttpResponse FakeNomad::node_allocations(const HttpRequest& request, const std::string& id) {
  return blocking_query(request, [&]() -> QueryOut {
    bool denied = false;
    const TokenSpec* token = token_locked(request, denied);
    if (denied || !allow_node_read_locked(token)) {
      record_denial_locked(request, denied ? "ACL token not found" : "node read");
      return {0, {}, permission_denied(), std::nullopt};
    }
    std::uint64_t max_index = 0;
    bool any = false;
    for (const auto& [aid, a] : allocs_) {
      if (a.node_id != id) continue;
      any = true;
      max_index = std::max(max_index, a.modify_index);
    }
    auto build = [this, &request, token, id] {
      json list = json::array();
      for (const auto& [aid, a] : allocs_) {
        if (a.node_id != id) continue;
        // Allocs in namespaces the token cannot read are dropped silently.
        if (!can_read_ns_locked(token, a.namespace_)) {
          record_denial_locked(request, "read-job in namespace " + a.namespace_, true);
          continue;
        }
        list.push_back(encode_alloc(a, /*include_job=*/true));
      }
      return list;
    };
    return {any ? max_index : allocs_index_, build, std::nullopt, std::nullopt};
  });
}

HttpResponse FakeNomad::allocation_get(const HttpRequest& request, const std::string& id) {
  return blocking_query(request, [&]() -> QueryOut {
    bool denied = false;
    const TokenSpec* token = token_locked(request, denied);
    if (denied) {
      record_denial_locked(request, "ACL token not found");
      return {0, {}, permission_denied(), std::nullopt};
    }
    auto it = allocs_.find(id);
    if (it == allocs_.end()) {
      // Like Nomad: blocks on the allocs table, then answers 404.
      return {allocs_index_, {}, std::nullopt, text_error(404, "alloc not found")};
    }
    if (!can_read_ns_locked(token, it->second.namespace_)) {
      record_denial_locked(request, "read-job in namespace " + it->second.namespace_);
      return {0, {}, text_error(500, "Unknown allocation \"" + id + "\""), std::nullopt};
    }
    const Alloc& a = it->second;
    return {a.modify_index, [&a] { return encode_alloc(a, /*include_job=*/true); }, std::nullopt,
            std::nullopt};
  });
}

HttpResponse FakeNomad::allocations_list(const HttpRequest& request) {
  std::string ns = request.query_value("namespace").value_or("");
  if (ns.empty()) ns = "default";
  std::shared_ptr<const FilterExpr> filter;
  if (auto f = request.query_value("filter"); f && !f->empty()) {
    auto parsed = parse_filter(*f);
    if (!parsed) return text_error(400, parsed.error().message);
    filter = *parsed;
  }
  std::size_t per_page = 0;
  if (auto v = request.query_value("per_page"); v && !v->empty()) {
    try {
      per_page = std::stoul(*v);
    } catch (const std::exception&) {
      return text_error(400, "Invalid per_page value");
    }
  }
  std::string prefix = request.query_value("prefix").value_or("");
  std::string next_token = request.query_value("next_token").value_or("");
  bool reverse = query_flag(request, "reverse");
  bool resources = query_flag(request, "resources");
  auto ts = request.query_value("task_states");
  bool task_states = !ts || *ts != "false";

  std::string next_out;
  HttpResponse response = blocking_query(request, [&]() -> QueryOut {
    bool denied = false;
    const TokenSpec* token = token_locked(request, denied);
    if (denied || (ns != "*" && !can_read_ns_locked(token, ns))) {
      record_denial_locked(request, denied ? "ACL token not found" : "read-job in namespace " + ns);
      return {0, {}, permission_denied(), std::nullopt};
    }
    auto build = [&, token]() -> json {
      std::vector<const Alloc*> rows;
      for (const auto& [id, a] : allocs_) {
        if (!id.starts_with(prefix)) continue;
        if (ns != "*" && a.namespace_ != ns) continue;
        if (!can_read_ns_locked(token, a.namespace_)) {
          record_denial_locked(request, "read-job in namespace " + a.namespace_, true);
          continue;
        }
        // go-bexpr runs on the full Allocation, not on the stub.
        if (filter && !filter->matches(encode_alloc(a, true))) continue;
        rows.push_back(&a);
      }
      if (reverse) std::reverse(rows.begin(), rows.end());
      json list = json::array();
      next_out.clear();
      bool started = next_token.empty();
      for (const Alloc* a : rows) {
        if (!started) {
          started = reverse ? a->id <= next_token : a->id >= next_token;
          if (!started) continue;
        }
        if (per_page > 0 && list.size() == per_page) {
          next_out = a->id;
          break;
        }
        list.push_back(encode_alloc_stub(*a, resources, task_states));
      }
      return list;
    };
    return {allocs_index_, build, std::nullopt, std::nullopt};
  });
  if (!next_out.empty()) response.headers.emplace_back("X-Nomad-Nexttoken", next_out);
  return response;
}

HttpResponse FakeNomad::job_get(const HttpRequest& request, const std::string& id) {
  std::string ns = request.query_value("namespace").value_or("");
  if (ns.empty()) ns = "default";
  return blocking_query(request, [&]() -> QueryOut {
    bool denied = false;
    const TokenSpec* token = token_locked(request, denied);
    if (denied || !can_read_ns_locked(token, ns)) {
      record_denial_locked(request, denied ? "ACL token not found" : "read-job in namespace " + ns);
      return {0, {}, permission_denied(), std::nullopt};
    }
    auto it = jobs_.find(job_key(ns, id));
    if (it == jobs_.end()) {
      return {index_, {}, std::nullopt, text_error(404, "job not found")};
    }
    auto job = it->second;
    return {job->modify_index, [job] { return encode_job(*job); }, std::nullopt, std::nullopt};
  });
}

}  // namespace cn::fakes
