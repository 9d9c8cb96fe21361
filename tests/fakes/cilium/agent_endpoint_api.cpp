#include "tests/fakes/cilium/agent_endpoint_api.h"

#include "tests/fakes/cilium/endpoint_options.h"

#include <algorithm>

#include "tests/fakes/cilium/endpoint_model.h"

namespace cn::fakes::cilium {

using nlohmann::json;

HttpResponse json_response(int status, const json& body) {
  HttpResponse r;
  r.status = status;
  r.headers.emplace_back("Content-Type", "application/json");
  r.body = go_json(body);
  return r;
}

HttpResponse error_string_response(int status, const std::string& message) {
  return json_response(status, json(message));
}

HttpResponse empty_response(int status) {
  HttpResponse r;
  r.status = status;
  return r;
}

namespace {

// cn::Error from validation/creation: message is already the JSON body text.
HttpResponse from_error(const cn::Error& e) {
  HttpResponse r;
  r.status = e.status;
  if (!e.message.empty()) {
    r.headers.emplace_back("Content-Type", "application/json");
    r.body = e.message + "\n";
  }
  return r;
}

HttpResponse lookup_failure(int status, const std::string& body) {
  HttpResponse r;
  r.status = status;
  if (!body.empty()) {
    r.headers.emplace_back("Content-Type", "application/json");
    r.body = body + "\n";
  }
  return r;
}

// What the handler prologue lets through: nothing (the refusal to send), or a limiter slot that
// the handler holds until it returns (parallel cap, processing time for the 429 pacing).
struct Gate {
  std::optional<HttpResponse> refusal;
  ApiRateLimiter::Slot slot;

  // An error answer after admission: Cilium's handlers report it to the limiter (r.Error), which
  // frees the slot without feeding the rate adjustment.
  HttpResponse failed(HttpResponse answer) {
    slot.failed();
    return answer;
  }
};

// The handler prologue of the real agent. Mutations are refused while the API is not ready
// before the limiter is asked: a starting agent answers 503 at once instead of queueing the
// request (pkg/endpoint/api/endpoint_api_handler.go, waitReadyFn; fact sheet section 2). Then the
// group's limiter (pkg/rate/api_limiter.go): wait on the agent clock or 429; a client that hung
// up while waiting gets nothing applied.
Gate gate(AgentState& st, const HttpRequest& req, const std::string& route, std::stop_token stop) {
  Gate g;
  std::shared_ptr<ApiRateLimiter> limiter;
  {
    std::lock_guard lock(st.mu);
    const bool mutating = req.method == "PUT" || req.method == "PATCH" || req.method == "DELETE";
    if (mutating && !st.api_ready) {
      g.refusal = error_string_response(503, "api not ready");
      return g;
    }
    const auto it = st.limiters.find(rate_limit_group(req.method, route));
    if (it != st.limiters.end()) limiter = it->second;
  }
  if (limiter) {
    auto admission = limiter->admit(stop, req.client_gone);
    if (admission.refused) {
      g.refusal = error_string_response(429, *admission.refused);
      return g;
    }
    g.slot = std::move(admission.slot);
  }
  return g;
}

// APICanModify in pkg/endpoint/endpoint.go (every release the fake emulates; older agents said
// "Endpoint cannot be modified by API call").
const std::string kCannotModify = "endpoint may not be associated reserved labels";

std::vector<Label> parse_all(const std::vector<std::string>& texts) {
  std::vector<Label> out;
  for (const auto& t : texts) out.push_back(parse_label(t));
  return out;
}

std::string join_labels(const LabelMap& m) {
  std::string out;
  for (const auto& [k, l] : m) {
    if (!l.is_reserved()) continue;
    out += (out.empty() ? "" : ",") + l.str();
  }
  return out;
}

HttpResponse list_endpoints(AgentState& st, const HttpRequest& req, std::stop_token stop) {
  auto filter = parse_label_filter(req.body);
  if (!filter) return from_error(filter.error());
  auto g = gate(st, req, "/endpoint", stop);
  if (g.refusal) return *g.refusal;
  std::lock_guard lock(st.mu);
  const std::vector<Label> wanted =
      filter->has_value() ? parse_all(**filter) : std::vector<Label>{};
  std::vector<const FakeEndpoint*> hits;
  for (const auto& [uid, ep] : st.endpoints) {
    if (ep.labels.has_all(wanted)) hits.push_back(&ep);
  }
  if (filter->has_value() && hits.empty()) return g.failed(empty_response(404));
  std::sort(hits.begin(), hits.end(), [](auto* a, auto* b) { return a->id < b->id; });
  json arr = json::array();
  const ModelContext ctx = st.model_context();
  for (const auto* ep : hits) arr.push_back(endpoint_json(*ep, ctx));
  return json_response(200, arr);
}

HttpResponse batch_delete(AgentState& st, const HttpRequest& req, std::stop_token stop) {
  auto container_id = parse_batch_delete(req.body);
  if (!container_id) return from_error(container_id.error());
  auto g = gate(st, req, "/endpoint", stop);
  if (g.refusal) return *g.refusal;
  if (container_id->empty()) return g.failed(error_string_response(400, "invalid container id"));
  std::lock_guard lock(st.mu);
  std::vector<std::uint64_t> doomed;
  for (const auto& [uid, ep] : st.endpoints) {
    if (ep.container_id == *container_id) doomed.push_back(uid);
  }
  if (doomed.empty()) return g.failed(error_string_response(404, "endpoints not found"));
  for (const auto uid : doomed) st.remove(uid);
  return empty_response(200);
}

HttpResponse put_endpoint(AgentState& st, const HttpRequest& req, std::stop_token stop) {
  auto change = parse_change_request(req.body);
  if (!change) return from_error(change.error());
  auto g = gate(st, req, "/endpoint/{id}", stop);
  if (g.refusal) return *g.refusal;
  std::lock_guard lock(st.mu);
  auto uid = st.create(*change);
  if (!uid) return g.failed(from_error(uid.error()));
  // The 201 carries the Endpoint from the 1.16-era spec on; older agents send nothing.
  if (st.cfg.version == CiliumVersion::v1_15) return empty_response(201);
  return json_response(201, endpoint_json(st.endpoints.at(*uid), st.model_context()));
}

HttpResponse patch_endpoint(AgentState& st, const RouteMatch& route, const HttpRequest& req,
                            std::stop_token stop) {
  auto change = parse_change_request(req.body);
  if (!change) return from_error(change.error());
  auto g = gate(st, req, route.route, stop);
  if (g.refusal) return *g.refusal;
  std::unique_lock lock(st.mu);
  std::string err;
  int status = 0;
  FakeEndpoint* ep = st.lookup(route.id, err, status);
  if (!ep) return g.failed(lookup_failure(status, err));
  if (ep->reserved_endpoint()) return g.failed(error_string_response(400, kCannotModify));
  const std::uint64_t uid = st.uid_of(*ep);
  const std::uint16_t number = ep->id;

  // ProcessChangeRequest: only non-empty identifiers/addresses overwrite.
  if (!change->container_id.empty()) ep->container_id = change->container_id;
  if (!change->container_name.empty()) ep->container_name = change->container_name;
  if (!change->interface_name.empty()) ep->interface_name = change->interface_name;
  if (change->interface_index != 0) ep->interface_index = change->interface_index;
  if (!change->mac.empty()) ep->mac = change->mac;
  if (!change->host_mac.empty()) ep->host_mac = change->host_mac;
  if (change->addressing) {
    if (!change->addressing->ipv4.empty()) ep->ipv4 = change->addressing->ipv4;
    if (!change->addressing->ipv6.empty()) ep->ipv6 = change->addressing->ipv6;
  }
  // Replace semantics: an absent `labels` is an empty set and wipes the orchestration labels
  // (only a nil set would be a no-op, and the decoder never produces one here).
  const LabelMap all = labels_from_model(change->labels.value_or(std::vector<std::string>{}));
  auto [identity, info] = st.filter.split(all);
  const bool changed = ep->labels.replace_identity_labels(identity);
  ep->labels.replace_information_labels(info);
  if (changed) {
    st.identity_labels_changed(*ep, uid);
  } else if (change->state == "waiting-for-identity" || change->state == "ready") {
    // validPatchTransitionState; with a known identity the endpoint is regenerated, and the
    // handler answers only when that regeneration is done (`<-ep.Regenerate(...)` in
    // pkg/endpoint/api/endpoint_api_handler.go). The wait ends early, with the agent's 500, if
    // the endpoint goes away meanwhile. A label change instead waits for its identity, and the
    // regeneration the agent triggers then is skipped at once.
    if (ep->identity) {
      const std::uint64_t before = ep->regenerations;
      st.regenerate(*ep, uid,
                    "Forcing endpoint regeneration because identity is known while handling API "
                    "PATCH");
      const bool done = st.regenerated.wait(lock, stop, [&] {
        const auto it = st.endpoints.find(uid);
        return it == st.endpoints.end() || it->second.regenerations > before;
      });
      if (!done || !st.endpoints.contains(uid)) {
        return g.failed(error_string_response(500,
                                              "error while regenerating endpoint. For more info "
                                              "run: 'cilium endpoint get " +
                                                  std::to_string(number) + "'"));
      }
    } else {
      st.add_log(*ep, change->state, "Endpoint patched");
    }
  }
  return empty_response(200);
}

HttpResponse patch_labels(AgentState& st, const RouteMatch& route, const HttpRequest& req,
                          std::stop_token stop) {
  auto user = parse_label_spec(req.body);
  if (!user) return from_error(user.error());
  auto g = gate(st, req, route.route, stop);
  if (g.refusal) return *g.refusal;
  std::lock_guard lock(st.mu);
  std::string err;
  int status = 0;
  FakeEndpoint* ep = st.lookup(route.id, err, status);
  if (!ep) return g.failed(lookup_failure(status, err));
  const std::uint64_t uid = st.uid_of(*ep);

  auto [add, del] = ep->labels.split_user_label_changes(labels_from_model(*user));
  // Filtered-out labels are dropped silently (allow-list mode drops nomad:* unless allowed).
  add = st.filter.split(add).first;
  del = st.filter.split(del).first;
  if (const auto r = join_labels(add); !r.empty()) {
    return g.failed(error_string_response(500, "Not allowed to add reserved labels: " + r));
  }
  if (const auto r = join_labels(del); !r.empty()) {
    return g.failed(error_string_response(500, "Not allowed to delete reserved labels: " + r));
  }
  if (ep->reserved_endpoint()) return g.failed(error_string_response(400, kCannotModify));
  if (ep->state == "disconnecting" || ep->state == "disconnected") return empty_response(200);

  auto changed = ep->labels.modify_identity_labels(add, del);
  if (!changed) return g.failed(error_string_response(404, changed.error().message));
  bool any_change = *changed;
  // The cilium-docker workaround: an empty diff on an init endpoint strips reserved:init, and
  // the remaining identity labels (user labels included) become the orchestration set.
  if (add.empty() && del.empty() && ep->labels.is_init()) {
    LabelMap ids = ep->labels.identity_labels();
    ids.erase("init");
    ep->labels.replace_identity_labels(ids);
    any_change = true;
  }
  if (any_change) st.identity_labels_changed(*ep, uid);
  return empty_response(200);
}

HttpResponse endpoint_read(AgentState& st, const RouteMatch& route, const HttpRequest& req,
                           std::stop_token stop) {
  auto g = gate(st, req, route.route, stop);
  if (g.refusal) return *g.refusal;
  std::lock_guard lock(st.mu);
  std::string err;
  int status = 0;
  FakeEndpoint* ep = st.lookup(route.id, err, status);
  if (!ep) return g.failed(lookup_failure(status, err));
  if (route.route == "/endpoint/{id}")
    return json_response(200, endpoint_json(*ep, st.model_context()));
  if (route.route == "/endpoint/{id}/labels")
    return json_response(200, label_configuration_json(*ep));
  if (route.route == "/endpoint/{id}/healthz") return json_response(200, endpoint_health_json(*ep));
  if (route.route == "/endpoint/{id}/config")
    return json_response(200, endpoint_config_status_json(*ep));
  return json_response(200, endpoint_log_json(*ep));
}

HttpResponse delete_endpoint(AgentState& st, const RouteMatch& route, const HttpRequest& req,
                             std::stop_token stop) {
  auto g = gate(st, req, route.route, stop);
  if (g.refusal) return *g.refusal;
  std::lock_guard lock(st.mu);
  std::string err;
  int status = 0;
  FakeEndpoint* ep = st.lookup(route.id, err, status);
  if (!ep) return g.failed(lookup_failure(status, err));
  st.remove(st.uid_of(*ep));
  return empty_response(200);
}

HttpResponse patch_endpoint_config(AgentState& st, const RouteMatch& route, const HttpRequest& req,
                                   std::stop_token stop) {
  auto body = bind_body(req.body, "endpoint-configuration", true);
  if (!body) return from_error(body.error());
  auto g = gate(st, req, route.route, stop);
  if (g.refusal) return *g.refusal;
  std::lock_guard lock(st.mu);
  std::string err;
  int status = 0;
  FakeEndpoint* ep = st.lookup(route.id, err, status);
  if (!ep) return g.failed(lookup_failure(status, err));
  // EndpointUpdate (daemon/cmd/endpoint.go): the endpoint's labels decide first whether the
  // API may change it at all, then the option library validates the whole map (400 on any bad
  // entry, nothing applied), then the endpoint regenerates with the new options.
  if (ep->reserved_endpoint()) {
    for (const auto& [name, value] : body->value("options", nlohmann::json::object()).items()) {
      if (name != "Debug" && name != "DebugLB" && name != "TraceNotification" &&
          name != "PolicyVerdictNotification" && name != "PolicyAuditMode" &&
          name != "MonitorAggregationLevel" && name != "PolicyTracing") {
        return g.failed(error_string_response(
            400, name + " cannot be modified for endpoints with reserved labels"));
      }
    }
  }
  const nlohmann::json options =
      body->is_object() ? body->value("options", nlohmann::json()) : nlohmann::json();
  auto valid = validate_endpoint_options(options);
  if (!valid) return g.failed(error_string_response(400, valid.error().message));
  bool changed = false;
  for (auto& [name, value] : *valid) {
    auto& slot = ep->options[name];
    changed = changed || slot != value;
    slot = std::move(value);
  }
  if (changed) ++ep->regenerations;
  return empty_response(200);
}

HttpResponse identities(AgentState& st, const RouteMatch& route, const HttpRequest& req) {
  std::lock_guard lock(st.mu);
  std::map<std::uint32_t, Identity> all;
  for (const auto& ident : st.identities.all()) all[ident.id] = ident;
  for (const auto& [uid, ep] : st.endpoints) {
    if (ep.identity) all[ep.identity->id] = *ep.identity;
  }
  if (route.route == "/identity/{id}") {
    const auto n = parse_go_uint(route.id, 32);
    if (!n) return error_string_response(400, "invalid identity ID " + route.id);
    const auto it = all.find(static_cast<std::uint32_t>(*n));
    if (it == all.end()) return empty_response(404);
    return json_response(200, identity_json(it->second));
  }
  auto filter = parse_label_filter(req.body);
  if (!filter) return from_error(filter.error());
  json arr = json::array();
  for (const auto& [id, ident] : all) {
    if (filter->has_value()) {
      const LabelMap have = labels_from_model(ident.labels);
      bool ok = true;
      for (const auto& w : parse_all(**filter)) {
        const auto h = have.find(w.key);
        ok = ok && h != have.end() && label_matches(w, h->second);
      }
      if (!ok) continue;
    }
    arr.push_back(identity_json(ident));
  }
  if (filter->has_value() && arr.empty()) return empty_response(404);
  return json_response(200, arr);
}

}  // namespace

Result<nlohmann::json> create_from_body(AgentState& st, std::string_view body) {
  auto change = parse_change_request(body);
  if (!change) return std::unexpected(change.error());
  std::lock_guard lock(st.mu);
  auto uid = st.create(*change);
  if (!uid) return std::unexpected(uid.error());
  return endpoint_json(st.endpoints.at(*uid), st.model_context());
}

HttpResponse serve_v1(AgentState& st, const RouteMatch& route, const HttpRequest& req,
                      std::stop_token stop) {
  const std::string& r = route.route;
  const std::string& m = req.method;
  if (r == "/config") {
    if (m == "PATCH") return empty_response(200);
    std::lock_guard lock(st.mu);
    return json_response(200, daemon_config_json(st.daemon_view()));
  }
  if (r == "/healthz") {
    const bool brief = req.header("brief").value_or("") == "true";
    std::lock_guard lock(st.mu);
    return json_response(200, healthz_json(st.daemon_view(), brief));
  }
  if (r == "/endpoint")
    return m == "GET" ? list_endpoints(st, req, stop) : batch_delete(st, req, stop);
  if (r == "/identity" || r == "/identity/{id}") return identities(st, route, req);
  if (r == "/endpoint/{id}") {
    if (m == "PUT") return put_endpoint(st, req, stop);
    if (m == "PATCH") return patch_endpoint(st, route, req, stop);
    if (m == "DELETE") return delete_endpoint(st, route, req, stop);
    return endpoint_read(st, route, req, stop);
  }
  if (r == "/endpoint/{id}/labels" && m == "PATCH") return patch_labels(st, route, req, stop);
  if (r == "/endpoint/{id}/config" && m == "PATCH")
    return patch_endpoint_config(st, route, req, stop);
  return endpoint_read(st, route, req, stop);
}

}  // namespace cn::fakes::cilium
