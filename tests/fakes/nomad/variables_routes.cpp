// The Variables API: GET /v1/vars, GET|PUT|POST|DELETE /v1/var/:path. Follows hashicorp/nomad
// command/agent/variable_endpoint.go (HTTP codes, CAS parsing, 204 on delete) and
// nomad/variables_endpoint.go (ACL checks, list filtering, blocking indexes). Locks are not
// modelled.
#include <algorithm>

#include "common/util/json_read.h"
#include "tests/fakes/http/status_error.h"
#include "tests/fakes/nomad/fake_nomad.h"
#include "tests/fakes/nomad/http_util.h"

namespace cn::fakes {

using nlohmann::json;

namespace {

std::string request_namespace(const HttpRequest& request) {
  std::string ns = request.query_value("namespace").value_or("");
  return ns.empty() ? "default" : ns;
}

std::int64_t unix_nanos_of(WallTime t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

HttpResponse with_status(HttpResponse r, int status) {
  r.status = status;
  return r;
}

}  // namespace

bool FakeNomad::variable_allowed_locked(const TokenSpec* token, const std::string& ns,
                                        const std::string& path,
                                        const std::string& capability) const {
  const AclObject* acl = acl_locked(token);
  return !acl || variable_allowed(acl->variables(), ns, path, capability);
}

VariableRecord& FakeNomad::store_variable_locked(const std::string& ns, const std::string& path,
                                                 const StringMap& items, std::uint64_t index) {
  std::int64_t now = unix_nanos_of(clock_.wall_now());
  auto [it, inserted] = variables_.try_emplace({ns, path});
  VariableRecord& v = it->second;
  if (inserted) {
    v.namespace_ = ns;
    v.path = path;
    v.create_index = index;
    v.create_time = now;
  }
  // Nomad re-encrypts on every set, so even identical items are a new ModifyIndex.
  v.items = items;
  v.modify_index = index;
  v.modify_time = now;
  variables_index_ = index;
  wake_locked();
  return v;
}

Result<VariableRecord> FakeNomad::put_variable(const std::string& ns, const std::string& path,
                                               const StringMap& items) {
  if (auto why = validate_variable(ns, path, items)) return http_fail(*why, 400);
  Lock lock(mu_);
  return store_variable_locked(ns, path, items, bump_locked());
}

void FakeNomad::delete_variable(const std::string& ns, const std::string& path) {
  Lock lock(mu_);
  std::uint64_t index = bump_locked();
  if (variables_.erase({ns, path}) > 0) variables_index_ = index;
  wake_locked();
}

std::optional<VariableRecord> FakeNomad::variable(const std::string& ns,
                                                  const std::string& path) const {
  Lock lock(mu_);
  auto it = variables_.find({ns, path});
  if (it == variables_.end()) return std::nullopt;
  return it->second;
}

std::vector<VariableRecord> FakeNomad::variables() const {
  Lock lock(mu_);
  std::vector<VariableRecord> out;
  for (const auto& [key, v] : variables_) out.push_back(v);
  return out;
}

std::uint64_t FakeNomad::variables_index() const {
  Lock lock(mu_);
  return variables_index_;
}

HttpResponse FakeNomad::variables_list(const HttpRequest& request) {
  if (request.method != "GET") return text_error(405, "Invalid method");
  const std::string ns = request_namespace(request);
  const std::string prefix = request.query_value("prefix").value_or("");
  const std::string next_token = request.query_value("next_token").value_or("");
  std::size_t per_page = 0;
  if (auto v = request.query_value("per_page"); v && !v->empty()) {
    try {
      std::size_t used = 0;
      per_page = std::stoul(*v, &used);
      if (used != v->size()) throw std::invalid_argument("per_page");
    } catch (const std::exception&) {
      return text_error(400, "Invalid per_page value");
    }
  }
  std::string next_out;
  HttpResponse response = blocking_query(request, [&]() -> QueryOut {
    bool denied = false;
    const TokenSpec* token = token_locked(request, denied);
    if (denied) {
      record_denial_locked(request, "ACL token not found");
      return {0, {}, text_error(403, "Permission denied"), std::nullopt};
    }
    // No namespace-level 403: Nomad lists what the token may `list` and silently drops the rest,
    // so a token with nothing in the namespace gets [] (nomad/variables_endpoint.go List). With
    // namespace=* (listAllVariables there) every namespace's variables are walked in
    // (namespace, path) order under the same per-variable filter and the same table index.
    auto build = [&, token]() -> json {
      json list = json::array();
      next_out.clear();
      bool token_found = next_token.empty();
      for (const auto& [key, v] : variables_) {
        if (ns != "*" && v.namespace_ != ns) continue;
        if (!v.path.starts_with(prefix)) continue;
        // The paginator's token is "<namespace>.<path>"; entries before it are skipped until
        // the first one at or after it.
        std::string item_token = v.namespace_ + "." + v.path;
        if (!token_found && item_token < next_token) continue;
        if (!variable_allowed_locked(token, v.namespace_, v.path, "list")) {
          record_denial_locked(request, "variables list on " + v.namespace_ + "/" + v.path, true);
          continue;
        }
        token_found = true;
        if (per_page > 0 && list.size() == per_page) {
          next_out = item_token;
          break;
        }
        list.push_back(encode_variable_metadata(v));
      }
      return list;
    };
    return {variables_index_, build, std::nullopt, std::nullopt};
  });
  if (!next_out.empty()) response.headers.emplace_back("X-Nomad-Nexttoken", next_out);
  return response;
}

HttpResponse FakeNomad::variable_request(const HttpRequest& request, const std::string& path) {
  if (path.empty()) return text_error(400, "missing variable path");
  if (request.method == "GET") return variable_get(request, path);
  if (request.method == "PUT" || request.method == "POST") {
    for (const char* op : {"lock-acquire", "lock-release", "lock-renew"}) {
      if (request.query_value(op)) {
        return text_error(400, "fake-nomad: variable locks are not modelled");
      }
    }
    return variable_write(request, path, /*remove=*/false);
  }
  if (request.method == "DELETE") return variable_write(request, path, /*remove=*/true);
  // Nomad answers an unknown method here with 400, not the usual 405.
  return text_error(400, "Invalid method");
}

HttpResponse FakeNomad::variable_get(const HttpRequest& request, const std::string& path) {
  const std::string ns = request_namespace(request);
  return blocking_query(request, [&]() -> QueryOut {
    bool denied = false;
    const TokenSpec* token = token_locked(request, denied);
    // Checked before the query runs: a token without `read` never blocks.
    if (denied || !variable_allowed_locked(token, ns, path, "read")) {
      record_denial_locked(request,
                           denied ? "ACL token not found" : "variables read on " + ns + "/" + path);
      return {0, {}, text_error(403, "Permission denied"), std::nullopt};
    }
    auto it = variables_.find({ns, path});
    if (it == variables_.end()) {
      // Nomad sets the query meta before it answers 404, so the index travels with it.
      HttpResponse missing = text_error(404, "variable not found");
      missing.headers.emplace_back("X-Nomad-Index", std::to_string(variables_index_));
      return {variables_index_, {}, std::nullopt, std::move(missing)};
    }
    const VariableRecord& v = it->second;
    return {v.modify_index, [&v] { return encode_variable(v); }, std::nullopt, std::nullopt};
  });
}

HttpResponse FakeNomad::variable_write(const HttpRequest& request, const std::string& path,
                                       bool remove) {
  std::string ns = request_namespace(request);
  StringMap items;
  if (!remove) {
    auto parsed = cn::json::parse_json_text(request.body, "variable");
    if (!parsed) return text_error(400, parsed.error().message);
    if (!parsed->is_object()) return text_error(400, "variable: body is not a JSON object");
    cn::json::JsonReader reader(*parsed, "Variable");
    std::string body_ns;
    reader.read("Namespace", body_ns);
    reader.read("Items", items);
    if (!reader.ok()) return text_error(400, reader.error());
    if (items.empty()) return text_error(400, "variable missing required Items object");
    if (!body_ns.empty()) ns = body_ns;  // the variable's own namespace wins over ?namespace=
  }
  std::optional<std::uint64_t> cas;
  if (auto c = request.query_value("cas"); c && !c->empty()) {
    try {
      std::size_t used = 0;
      cas = std::stoull(*c, &used);
      if (used != c->size() || c->front() == '-') throw std::invalid_argument("cas");
    } catch (const std::exception&) {
      return text_error(
          400, "can not parse cas: strconv.ParseUint: parsing \"" + *c + "\": invalid syntax");
    }
  }

  Lock lock(mu_);
  bool denied = false;
  const TokenSpec* token = token_locked(request, denied);
  const std::string op = remove ? "destroy" : "write";
  if (denied || !variable_allowed_locked(token, ns, path, op)) {
    record_denial_locked(
        request, denied ? "ACL token not found" : "variables " + op + " on " + ns + "/" + path);
    return text_error(403, "Permission denied");
  }
  if (!remove) {
    if (auto why = validate_variable(ns, path, items)) return text_error(400, *why);
  }
  // Every apply goes through Raft, conflicts and no-op deletes included: the index moves, the
  // variables table only when a row changes.
  const std::uint64_t index = bump_locked();
  auto it = variables_.find({ns, path});
  const VariableRecord* existing = it == variables_.end() ? nullptr : &it->second;

  std::optional<VariableRecord> conflict;
  if (cas) {
    if (*cas == 0 && existing) {
      conflict = *existing;  // set-if-absent / delete-if-absent, but it exists
    } else if (*cas != 0 && !existing) {
      VariableRecord zero;  // the caller expected a value: a zero-value conflict
      zero.namespace_ = ns;
      zero.path = path;
      conflict = zero;
    } else if (existing && *cas != existing->modify_index) {
      conflict = *existing;
    }
  }
  if (conflict) {
    // The conflicting value's Items only for a caller that may read it.
    if (!variable_allowed_locked(token, ns, path, "read")) conflict->items.clear();
    return with_status(json_reply(request, encode_variable(*conflict), conflict->modify_index),
                       409);
  }
  if (remove) {
    if (existing) {
      variables_.erase(it);
      variables_index_ = index;
    }
    wake_locked();
    HttpResponse r = json_reply(request, json(nullptr), index);
    r.status = 204;
    r.body.clear();
    return r;
  }
  const VariableRecord& stored = store_variable_locked(ns, path, items, index);
  return json_reply(request, encode_variable(stored), index);
}

}  // namespace cn::fakes
