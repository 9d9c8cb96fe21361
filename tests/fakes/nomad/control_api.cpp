// /_fake/ control API: the scenario and fault methods over HTTP, for the demo and benchmarks
// that run fake-nomad as a separate process. Not subject to ACL, faults, latency or the log.
#include "tests/fakes/http/status_error.h"
#include "tests/fakes/nomad/fake_nomad.h"
#include "tests/fakes/nomad/http_util.h"
#include "tests/fakes/nomad/spec_json.h"

namespace cn::fakes {

using nlohmann::json;

namespace {

HttpResponse error_reply(const Error& e) {
  return text_error(e.status >= 400 ? e.status : 400, e.message);
}

HttpResponse ok() {
  return control_reply(json{{"ok", true}});
}

}  // namespace

HttpResponse FakeNomad::route_control(const HttpRequest& request,
                                      const std::vector<std::string>& s) {
  json body = json::object();
  if (!request.body.empty()) {
    body = json::parse(request.body, nullptr, false);
    if (body.is_discarded()) return text_error(400, "body is not JSON");
  }
  const std::string& m = request.method;
  const std::string what = s.size() > 1 ? s[1] : "";
  try {
    if (what == "state" && m == "GET") {
      Lock lock(mu_);
      json allocs = json::array();
      for (const auto& [id, a] : allocs_) {
        allocs.push_back({{"id", id},
                          {"name", a.name},
                          {"namespace", a.namespace_},
                          {"job", a.job_id},
                          {"node", a.node_id},
                          {"client_status", a.client_status},
                          {"desired_status", a.desired_status},
                          {"address", a.network_status ? a.network_status->address : ""},
                          {"modify_index", a.modify_index}});
      }
      json jobs = json::array();
      for (const auto& [key, j] : jobs_) {
        jobs.push_back({{"id", j->spec.id},
                        {"namespace", j->spec.namespace_},
                        {"parent_id", j->parent_id},
                        {"status", j->status},
                        {"modify_index", j->modify_index}});
      }
      json nodes = json::array();
      for (const auto& [id, n] : nodes_) {
        nodes.push_back({{"id", id},
                         {"name", n.name},
                         {"status", n.status},
                         {"drain", n.drain},
                         {"modify_index", n.modify_index}});
      }
      return control_reply({{"index", index_},
                            {"allocs", allocs},
                            {"jobs", jobs},
                            {"nodes", nodes},
                            {"pending_updates", delayed_.size()},
                            {"active_streams", active_streams_},
                            {"blocked_queries", blocked_},
                            {"services_index", services_.index()}});
    }
    if (what == "jobs" && m == "POST" && s.size() == 2) {
      auto spec = job_spec_from_json(body);
      if (!spec) return error_reply(spec.error());
      auto idx = register_job(*spec);
      if (!idx) return error_reply(idx.error());
      return control_reply({{"index", *idx}});
    }
    if (what == "jobs" && m == "POST" && s.size() == 3) {
      std::string ns = body.value("namespace", "default");
      if (s[2] == "stop") {
        auto st = stop_job(ns, body.at("id").get<std::string>());
        return st ? ok() : error_reply(st.error());
      }
      Result<std::string> id = http_fail("unknown job action " + s[2], 404);
      if (s[2] == "periodic") {
        std::optional<std::int64_t> at;
        if (body.contains("launch_unix")) at = body.at("launch_unix").get<std::int64_t>();
        id = launch_periodic(ns, body.at("parent").get<std::string>(), at);
      } else if (s[2] == "dispatch") {
        StringMap meta;
        const json meta_json = body.value("meta", json::object());  // items() needs a live object
        for (const auto& [k, v] : meta_json.items()) {
          meta[k] = v.get<std::string>();
        }
        id =
            dispatch_job(ns, body.at("parent").get<std::string>(), meta, body.value("payload", ""));
      }
      if (!id) return error_reply(id.error());
      return control_reply({{"id", *id}});
    }
    if (what == "nodes" && m == "POST" && s.size() == 2) {
      auto node = node_from_json(body);
      if (!node) return error_reply(node.error());
      add_node(*node);
      return ok();
    }
    if (what == "nodes" && m == "POST" && s.size() == 4 && s[3] == "status") {
      auto st = set_node_status(s[2], body.at("status").get<std::string>());
      return st ? ok() : error_reply(st.error());
    }
    if (what == "nodes" && m == "DELETE" && s.size() == 3) {
      auto st = remove_node(s[2]);
      return st ? ok() : error_reply(st.error());
    }
    if (what == "allocs" && m == "POST" && s.size() == 2) {
      std::vector<PlaceRequest> reqs;
      for (const auto& item : body.is_array() ? body : json::array({body})) {
        auto req = place_request_from_json(item);
        if (!req) return error_reply(req.error());
        reqs.push_back(*req);
      }
      auto ids = place_allocs(std::move(reqs));
      if (!ids) return error_reply(ids.error());
      if (body.is_array()) return control_reply({{"ids", *ids}});
      return control_reply({{"id", ids->front()}});
    }
    if (auto r = route_control_services(request, s, body)) return std::move(*r);
    if (what == "allocs" && m == "POST" && s.size() == 4) {
      const std::string& id = s[2];
      Status st = http_fail("unknown alloc action " + s[3], 404);
      if (s[3] == "network") {
        auto net = network_status_from_json(body);
        if (!net) return error_reply(net.error());
        st = set_network_status(id, *net);
      } else if (s[3] == "client-status") {
        st = set_client_status(id, body.at("status").get<std::string>(),
                               body.value("description", ""));
      } else if (s[3] == "stop") {
        StopOptions o;
        o.via_desired_transition = body.value("via_desired_transition", false);
        o.client_status = body.value("client_status", o.client_status);
        o.desired_description = body.value("desired_description", o.desired_description);
        st = stop_alloc(id, o);
      }
      return st ? ok() : error_reply(st.error());
    }
    if (what == "index" && m == "POST") {
      reset_index(body.at("reset_to").get<std::uint64_t>());
      return control_reply({{"index", current_index()}});
    }
    if (what == "publish-delay" && m == "POST") {
      set_publish_delay(std::chrono::milliseconds{body.at("ms").get<int>()});
      return ok();
    }
    if (what == "flush" && m == "POST") {
      flush_updates();
      return ok();
    }
    if (what == "acl" && m == "POST") {
      set_acl_enabled(body.at("enabled").get<bool>());
      return ok();
    }
    if (what == "tokens" && m == "POST") {
      auto token = token_from_json(body);
      if (!token) return error_reply(token.error());
      add_token(*token);
      return ok();
    }
    if (what == "acl" && m == "GET" && s.size() == 3 && s[2] == "denials") {
      json list = json::array();
      for (const auto& d : acl_denials()) {
        list.push_back({{"route", d.route},
                        {"method", d.method},
                        {"target", d.target},
                        {"reason", d.reason},
                        {"silent", d.silent}});
      }
      return control_reply({{"denials", list}});
    }
    if (what == "tokens" && m == "DELETE" && s.size() == 3) {
      revoke_token(s[2]);
      return ok();
    }
    if (what == "faults" && m == "POST") {
      if (body.contains("fail_next")) {
        const json& f = body.at("fail_next");
        fail_next(f.value("count", 1), f.value("status", 500), f.value("path_prefix", ""),
                  f.value("body", ""));
      }
      if (body.contains("latency_ms")) {
        set_latency(std::chrono::milliseconds{body.at("latency_ms").get<int>()});
      }
      if (body.contains("stream_drop_after")) {
        set_stream_drop_after(body.at("stream_drop_after").get<int>());
      }
      if (body.contains("stream_stall")) set_stream_stall(body.at("stream_stall").get<bool>());
      if (body.contains("heartbeat_ms")) {
        set_heartbeat(std::chrono::milliseconds{body.at("heartbeat_ms").get<int>()});
      }
      if (body.contains("stream_transport")) {
        auto t = body.at("stream_transport").get<std::string>();
        if (t != "raw" && t != "chunked") return text_error(400, "stream_transport: raw|chunked");
        set_stream_transport(t == "raw" ? StreamTransport::kRaw : StreamTransport::kChunked);
      }
      return ok();
    }
    if (what == "streams" && m == "POST" && s.size() == 3 && s[2] == "drop") {
      drop_streams();
      return ok();
    }
    if (what == "requests" && m == "GET") {
      json list = json::array();
      for (const auto& r : requests()) {
        list.push_back(
            {{"route", r.route}, {"method", r.method}, {"target", r.target}, {"status", r.status}});
      }
      return control_reply({{"counts", request_counts()}, {"requests", list}});
    }
    if (what == "requests" && m == "DELETE") {
      clear_requests();
      return ok();
    }
    if (what == "variables" && s.size() == 2) {
      if (m == "GET") {
        json list = json::array();
        for (const auto& v : variables()) list.push_back(encode_variable(v));
        return control_reply({{"index", variables_index()}, {"variables", list}});
      }
      auto spec = variable_spec_from_json(body);
      if (!spec) return error_reply(spec.error());
      if (m == "POST") {
        auto stored = put_variable(spec->namespace_, spec->path, spec->items);
        if (!stored) return error_reply(stored.error());
        return control_reply({{"index", stored->modify_index}});
      }
      if (m == "DELETE") {
        delete_variable(spec->namespace_, spec->path);
        return ok();
      }
    }
    if (what == "scenario" && m == "POST") {
      auto st = load_scenario(body);
      return st ? ok() : error_reply(st.error());
    }
  } catch (const json::exception& e) {
    return text_error(400, std::string("bad request: ") + e.what());
  }
  return text_error(404, "unknown control endpoint");
}

}  // namespace cn::fakes
