// The native service endpoints (command/agent/service_registration_endpoint.go,
// nomad/service_registration_endpoint.go) and the alloc checks endpoint
// (command/agent/alloc_endpoint.go allocChecks). Every read answers the index of the whole
// service_registrations table; the watch behind a parked query is narrower.
#include <algorithm>
#include <set>

#include "tests/fakes/nomad/fake_nomad.h"
#include "tests/fakes/nomad/filter_expr.h"
#include "tests/fakes/nomad/http_util.h"

namespace cn::fakes {

using nlohmann::json;

namespace {

std::string services_namespace(const HttpRequest& request) {
  std::string ns = request.query_value("namespace").value_or("");
  return ns.empty() ? "default" : ns;
}

json registrations_json(const std::vector<ServiceRegistration>& rows) {
  json list = json::array();
  for (const auto& r : rows) list.push_back(encode_service_registration(r));
  return list;
}

}  // namespace

// ServiceRegistration.List: one stub per namespace with each name's union of tags. Go map and
// set iteration make every order random, so the fake shuffles all three levels.
HttpResponse FakeNomad::services_list(const HttpRequest& request) {
  const std::string ns = services_namespace(request);
  bool no_namespace = false;
  HttpResponse response = blocking_query(
      request,
      [&]() -> QueryOut {
        bool denied = false;
        const TokenSpec* token = token_locked(request, denied);
        if (denied || (ns != "*" && !can_read_ns_locked(token, ns))) {
          record_denial_locked(request,
                               denied ? "ACL token not found" : "read-job in namespace " + ns);
          return {0, {}, text_error(403, "Permission denied"), std::nullopt};
        }
        // listAllServiceRegistrations: a token that can read-job in no namespace gets [] and
        // a reply whose index was never set (nomad/job_endpoint.go allowedNSes).
        no_namespace = ns == "*" && acl_locked(token) && !reads_any_namespace_locked(token);
        if (no_namespace) {
          record_denial_locked(request, "read-job in any namespace", true);
          return {0, [] { return json::array(); }, std::nullopt, std::nullopt};
        }
        auto build = [this, &request, ns, token]() -> json {
          std::map<std::string, std::map<std::string, std::set<std::string>>> by_ns;
          for (const auto& [key, r] : services_.rows()) {
            if (ns != "*" && r.namespace_ != ns) continue;
            if (!can_read_ns_locked(token, r.namespace_)) {
              record_denial_locked(request, "read-job in namespace " + r.namespace_, true);
              continue;
            }
            auto& tags = by_ns[r.namespace_][r.service_name];
            tags.insert(r.tags.begin(), r.tags.end());
          }
          json list = json::array();
          for (const auto& [space, names] : by_ns) {
            json services = json::array();
            for (const auto& [name, tag_set] : names) {
              std::vector<std::string> tags(tag_set.begin(), tag_set.end());
              std::shuffle(tags.begin(), tags.end(), shuffle_rng_);
              services.push_back(
                  {{"ServiceName", name}, {"Tags", tags.empty() ? json::array() : json(tags)}});
            }
            std::shuffle(services.begin(), services.end(), shuffle_rng_);
            list.push_back({{"Namespace", space}, {"Services", services}});
          }
          std::shuffle(list.begin(), list.end(), shuffle_rng_);
          return list;
        };
        return {services_.index(), build, std::nullopt, std::nullopt};
      },
      [&] { return services_.version(ns == "*" ? "" : ServiceTable::watch_namespace(ns)); });
  if (no_namespace && response.status == 200) {
    for (auto& [name, value] : response.headers) {
      if (name == "X-Nomad-Index") value = "0";
    }
  }
  return response;
}

// The namespaces the fake knows of (it has no namespace table): default and every namespace
// a job, an allocation, a variable or a registration lives in.
bool FakeNomad::reads_any_namespace_locked(const TokenSpec* token) const {
  std::set<std::string> known = {"default"};
  for (const auto& [key, job] : jobs_) known.insert(job->spec.namespace_);
  for (const auto& [id, a] : allocs_) known.insert(a.namespace_);
  for (const auto& [key, v] : variables_) known.insert(key.first);
  for (const auto& [key, r] : services_.rows()) known.insert(r.namespace_);
  return std::any_of(known.begin(), known.end(),
                     [&](const std::string& ns) { return can_read_ns_locked(token, ns); });
}

// /v1/service/<name> (GET) and /v1/service/<name>/<id> (DELETE), split on the raw path so that
// empty segments count as Nomad's handler counts them.
HttpResponse FakeNomad::service_request(const HttpRequest& request) {
  const std::string& raw = request.raw_path.empty() ? request.path : request.raw_path;
  const std::string prefix = "/v1/service/";
  std::string suffix = raw.starts_with(prefix) ? raw.substr(prefix.size()) : "";
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (;;) {
    std::size_t slash = suffix.find('/', start);
    parts.push_back(percent_decode(suffix.substr(start, slash - start)));
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  if (parts.size() == 1) {
    if (request.method != "GET" && request.method != "HEAD") {
      return text_error(405, "Invalid method");
    }
    if (parts[0].empty()) return text_error(400, "missing service name");
    return service_get(request, parts[0]);
  }
  if (parts.size() == 2) {
    if (request.method != "DELETE") return text_error(405, "Invalid method");
    if (parts[1].empty()) return text_error(400, "missing service id");
    return service_delete(request, parts[1]);
  }
  return text_error(400, "invalid URI");
}

// ServiceRegistration.GetService: an exact (namespace, name) lookup ordered by ID, go-bexpr
// ?filter, pages with tokens "<namespace>.<ID>".
HttpResponse FakeNomad::service_get(const HttpRequest& request, const std::string& name) {
  const std::string ns = services_namespace(request);
  std::shared_ptr<const FilterExpr> filter;
  if (auto f = request.query_value("filter"); f && !f->empty()) {
    auto parsed = parse_filter(*f);
    if (!parsed) {
      return text_error(400,
                        "failed to create result paginator: failed to read filter "
                        "expression: " +
                            parsed.error().message);
    }
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
  const std::string next_token = request.query_value("next_token").value_or("");
  // ?choose=<n>|<key> (nomad/service_registration_endpoint.go choose): n an integer, key set.
  std::optional<std::pair<std::size_t, std::string>> choose;
  if (auto c = request.query_value("choose"); c && !c->empty()) {
    auto bar = c->find('|');
    std::size_t used = 0;
    long n = -1;
    try {
      if (bar != std::string::npos) n = std::stol(c->substr(0, bar), &used);
    } catch (const std::exception&) {
      n = -1;
    }
    if (bar == std::string::npos || used != bar || n < 0 || bar + 1 == c->size()) {
      return text_error(400,
                        "failed to choose services: Parameter for choose must be in form "
                        "'<number>|<key>'");
    }
    choose = std::make_pair(static_cast<std::size_t>(n), c->substr(bar + 1));
  }
  const bool sha256 = version_at_least(cfg_.version, 2, 0, 5);
  std::string next_out;
  HttpResponse response = blocking_query(
      request,
      [&]() -> QueryOut {
        bool denied = false;
        const TokenSpec* token = token_locked(request, denied);
        if (denied || !can_read_ns_locked(token, ns)) {
          record_denial_locked(request,
                               denied ? "ACL token not found" : "read-job in namespace " + ns);
          return {0, {}, text_error(403, "Permission denied"), std::nullopt};
        }
        auto build = [&]() -> json {
          std::vector<const ServiceRegistration*> page;
          next_out.clear();
          for (const auto& [key, r] : services_.rows()) {
            if (r.namespace_ != ns || r.service_name != name) continue;
            if (filter && !filter->matches(encode_service_registration(r))) continue;
            std::string token_of = r.namespace_ + "." + r.id;
            if (!next_token.empty() && token_of < next_token) continue;
            if (per_page > 0 && page.size() == per_page) {
              next_out = token_of;
              break;
            }
            page.push_back(&r);
          }
          // choose applies to the page: the first n by hash, in hash order.
          if (choose) {
            std::vector<std::pair<std::string, const ServiceRegistration*>> ranked;
            for (const auto* r : page)
              ranked.emplace_back(choose_hash(*r, choose->second, sha256), r);
            std::stable_sort(ranked.begin(), ranked.end(),
                             [](const auto& a, const auto& b) { return a.first < b.first; });
            page.clear();
            for (std::size_t i = 0; i < ranked.size() && i < choose->first; ++i) {
              page.push_back(ranked[i].second);
            }
          }
          json list = json::array();
          for (const auto* r : page) list.push_back(encode_service_registration(*r));
          return list;
        };
        return {services_.index(), build, std::nullopt, std::nullopt};
      },
      [&] { return services_.version(ServiceTable::watch_name(ns, name)); });
  if (!next_out.empty()) response.headers.emplace_back("X-Nomad-Nexttoken", next_out);
  return response;
}

// ServiceRegistration.DeleteByID: the name in the path is ignored; a miss is the state store's
// plain error, hence a 500.
HttpResponse FakeNomad::service_delete(const HttpRequest& request, const std::string& id) {
  const std::string ns = services_namespace(request);
  Lock lock(mu_);
  bool denied = false;
  const TokenSpec* token = token_locked(request, denied);
  if (denied || !allow_ns_op_locked(token, ns, "submit-job")) {
    record_denial_locked(request, denied ? "ACL token not found" : "submit-job in namespace " + ns);
    return text_error(403, "Permission denied");
  }
  // The delete is applied through Raft first, so a miss still takes an index.
  std::uint64_t idx = bump_locked();
  if (!services_.rows().contains({ns, id})) {
    return text_error(500, "service registration not found");
  }
  auto gone = services_.remove(ns, id, idx);
  commit_locked(idx, {service_event_locked(*gone, "ServiceDeregistration")});
  HttpResponse r;
  r.headers = {{"Vary", "Accept-Encoding"}, {"X-Nomad-Index", std::to_string(idx)}};
  return r;
}

// Alloc.GetServiceRegistrations: the alloc must live in the requested namespace; its watch
// covers the alloc and its registrations.
HttpResponse FakeNomad::allocation_services(const HttpRequest& request,
                                            const std::string& alloc_id) {
  const std::string ns = services_namespace(request);
  return blocking_query(
      request,
      [&]() -> QueryOut {
        bool denied = false;
        const TokenSpec* token = token_locked(request, denied);
        if (denied || !can_read_ns_locked(token, ns)) {
          record_denial_locked(request,
                               denied ? "ACL token not found" : "read-job in namespace " + ns);
          return {0, {}, text_error(403, "Permission denied"), std::nullopt};
        }
        auto it = allocs_.find(alloc_id);
        if (it == allocs_.end() || it->second.namespace_ != ns) {
          return {0, {}, std::nullopt, text_error(404, "alloc not found")};
        }
        auto build = [this, alloc_id] { return registrations_json(services_.of_alloc(alloc_id)); };
        return {services_.index(), build, std::nullopt, std::nullopt};
      },
      [&]() -> std::uint64_t {
        auto it = allocs_.find(alloc_id);
        return services_.version(ServiceTable::watch_alloc(alloc_id)) +
               (it == allocs_.end() ? 0 : it->second.modify_index);
      });
}

// Job.GetServiceRegistrations: every registration of the job's allocs.
HttpResponse FakeNomad::job_services(const HttpRequest& request, const std::string& job_id) {
  const std::string ns = services_namespace(request);
  return blocking_query(
      request,
      [&]() -> QueryOut {
        bool denied = false;
        const TokenSpec* token = token_locked(request, denied);
        if (denied || !can_read_ns_locked(token, ns)) {
          record_denial_locked(request,
                               denied ? "ACL token not found" : "read-job in namespace " + ns);
          return {0, {}, text_error(403, "Permission denied"), std::nullopt};
        }
        auto job = jobs_.find(job_key(ns, job_id));
        if (job == jobs_.end()) {
          return {0, {}, std::nullopt, text_error(404, "job not found")};
        }
        auto build = [this, ns, job_id] {
          std::vector<ServiceRegistration> rows;
          for (const auto& [key, r] : services_.rows()) {
            if (r.namespace_ == ns && r.job_id == job_id) rows.push_back(r);
          }
          return registrations_json(rows);
        };
        return {services_.index(), build, std::nullopt, std::nullopt};
      },
      [&]() -> std::uint64_t {
        auto job = jobs_.find(job_key(ns, job_id));
        return services_.version(ServiceTable::watch_job(ns, job_id)) +
               (job == jobs_.end() ? 0 : job->second->modify_index);
      });
}

// The client's check results: not a blocking query, no X-Nomad-Index, read-job in the alloc's
// namespace, 404 for an alloc the client does not know.
HttpResponse FakeNomad::allocation_checks(const HttpRequest& request, const std::string& alloc_id) {
  Lock lock(mu_);
  bool denied = false;
  const TokenSpec* token = token_locked(request, denied);
  if (denied) {
    record_denial_locked(request, "ACL token not found");
    return text_error(403, "Permission denied");
  }
  auto it = allocs_.find(alloc_id);
  if (it == allocs_.end()) {
    return text_error(404, "Unknown allocation \"" + alloc_id + "\"");
  }
  if (!can_read_ns_locked(token, it->second.namespace_)) {
    record_denial_locked(request, "read-job in namespace " + it->second.namespace_);
    return text_error(403, "Permission denied");
  }
  json body = json::object();
  if (auto c = checks_.find(alloc_id); c != checks_.end()) {
    for (const auto& [id, result] : c->second) body[id] = encode_check_result(result);
  }
  lock.unlock();
  return json_reply(request, body, std::nullopt);
}

}  // namespace cn::fakes
