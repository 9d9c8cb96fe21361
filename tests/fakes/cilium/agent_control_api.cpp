// The /_fake/ control API: the C++ scenario controls over HTTP, for a fake agent running as a
// separate process (the demo, shell-driven tests). Never rate limited, faulted or logged.
#include <algorithm>

#include "tests/fakes/cilium/agent_endpoint_api.h"
#include "tests/fakes/cilium/agent_state.h"
#include "tests/fakes/cilium/endpoint_model.h"
#include "tests/fakes/cilium/fake_cilium_agent.h"

namespace cn::fakes {

using nlohmann::json;

namespace {

HttpResponse ok(const json& body = json{{"ok", true}}) {
  return cilium::json_response(200, body);
}

HttpResponse bad(const std::string& why) {
  return cilium::json_response(400, json{{"error", why}});
}

std::chrono::milliseconds ms(const json& j, const char* key, long long fallback = 0) {
  return std::chrono::milliseconds(j.value(key, fallback));
}

json request_json(const AgentRequest& r) {
  using std::chrono::duration_cast;
  using std::chrono::microseconds;
  return json{
      {"method", r.method},
      {"path", r.path},
      {"route", r.route},
      {"status", r.status},
      {"body", r.body},
      {"received_ns", r.received.time_since_epoch().count()},
      {"answered_ns", r.answered.time_since_epoch().count()},
      {"real_latency_us", duration_cast<microseconds>(r.real_answered - r.real_received).count()}};
}

Result<FaultRule> fault_from(const json& j) {
  FaultRule f;
  f.method = j.value("method", "");
  f.route = j.value("route", "");
  f.count = j.value("count", 1);
  f.status = j.value("status", 500);
  const std::string action = j.value("action", "status");
  if (action == "drop")
    f.action = FaultRule::Action::drop;
  else if (action == "stall")
    f.action = FaultRule::Action::stall;
  else if (action != "status")
    return fail("action must be status, drop or stall");
  if (const auto b = j.find("body"); b != j.end()) {
    // A string is sent verbatim; anything else is sent as JSON.
    f.body = b->is_string() ? b->get<std::string>() : cilium::go_json(*b);
  }
  f.content_type = j.value("content_type", "application/json");
  if (f.count == 0 || f.count < -1) return fail("count must be >= 1, or -1 for until cleared");
  return f;
}

}  // namespace

HttpResponse FakeCiliumAgent::handle_control(const HttpRequest& req) {
  json body = json::object();
  if (!req.body.empty()) {
    try {
      body = json::parse(req.body);
    } catch (const json::parse_error& e) {
      return bad(std::string("body is not JSON: ") + e.what());
    }
    if (!body.is_object()) return bad("body must be a JSON object");
  }
  const std::string& p = req.path;
  const std::string& m = req.method;
  try {
    if (p == "/_fake/state" && m == "GET") return ok(dump_state());
    if (p == "/_fake/policies" && m == "GET") return ok(policies());
    if (p == "/_fake/reset" && m == "POST") {
      reset();
      return ok();
    }
    if (p == "/_fake/faults") {
      if (m == "DELETE") {
        clear_faults();
        return ok();
      }
      if (m == "GET") return ok(dump_state()["faults"]);
      if (m == "POST") {
        auto f = fault_from(body);
        if (!f) return bad(f.error().message);
        inject_fault(std::move(*f));
        return ok();
      }
    }
    if (p == "/_fake/latency" && m == "POST") {
      set_latency(ms(body, "ms"), body.value("method", ""), body.value("route", ""));
      return ok();
    }
    if (p == "/_fake/stall" && m == "POST") {
      set_stall(body.value("on", true));
      return ok();
    }
    if (p == "/_fake/api-ready" && m == "POST") {
      set_api_ready(body.value("ready", true));
      return ok();
    }
    if (p == "/_fake/daemon-health" && m == "POST") {
      set_daemon_health(body.value("state", "Ok"), body.value("msg", ""));
      return ok();
    }
    if (p == "/_fake/disable-api" && m == "POST") {
      disable_api(body.value("method", ""), body.value("route", ""));
      return ok();
    }
    if (p == "/_fake/settings" && m == "POST") {
      if (body.contains("identity_delay_ms")) set_identity_delay(ms(body, "identity_delay_ms"));
      if (body.contains("grace_period_ms")) set_grace_period(ms(body, "grace_period_ms"));
      if (body.contains("regeneration_step_ms"))
        set_regeneration_step(ms(body, "regeneration_step_ms"));
      return ok();
    }
    if (p == "/_fake/endpoint-health" && m == "POST") {
      if (!set_endpoint_health(body.value("id", ""), body.value("health", "OK"))) {
        return cilium::json_response(404, json{{"error", "no such endpoint"}});
      }
      return ok();
    }
    if (p == "/_fake/endpoints" && m == "POST") {
      auto created = create_endpoint(body);
      if (!created) {
        HttpResponse r;
        r.status = created.error().status;
        r.body = created.error().message + "\n";
        return r;
      }
      return cilium::json_response(201, *created);
    }
    if (p == "/_fake/restart" && m == "POST") {
      RestartOptions opts;
      opts.renumber = body.value("renumber", true);
      opts.downtime = ms(body, "downtime_ms");
      opts.api_not_ready_for = ms(body, "api_not_ready_ms");
      bool expected = false;
      if (!restarting_.compare_exchange_strong(expected, true)) {
        return cilium::json_response(409, json{{"error", "a restart is already in progress"}});
      }
      // The listener cannot be stopped from one of its own connection threads, and must not be
      // stopped before this answer is out: the restart starts from the stream callback, after
      // the body has been written.
      HttpResponse resp;
      resp.status = 202;
      resp.headers.emplace_back("Content-Type", "application/json");
      resp.stream = [this, opts](StreamWriter& w) {
        w.write(cilium::go_json(json{{"ok", true}}));
        std::lock_guard lock(restart_mu_);
        if (restart_thread_.joinable()) restart_thread_.join();  // finished: restarting_ was false
        restart_thread_ = std::jthread([this, opts] {
          restart(opts);
          restarting_ = false;
        });
      };
      return resp;
    }
    if (p == "/_fake/requests") {
      if (m == "DELETE") {
        clear_requests();
        return ok();
      }
      if (m == "GET") {
        const std::string method = req.query_value("method").value_or("");
        const std::string route = req.query_value("route").value_or("");
        json arr = json::array();
        for (const auto& r : requests()) {
          if ((method.empty() || r.method == method) && (route.empty() || r.route == route)) {
            arr.push_back(request_json(r));
          }
        }
        return ok(arr);
      }
    }
    if (p == "/_fake/requests/count" && m == "GET") {
      return ok(json{{"count", count(req.query_value("method").value_or(""),
                                     req.query_value("route").value_or(""))}});
    }
    if (p == "/_fake/settled" && m == "GET") {
      const auto timeout =
          std::chrono::milliseconds(std::stoll(req.query_value("timeout_ms").value_or("5000")));
      return ok(json{{"settled", wait_settled(timeout)}});
    }
  } catch (const std::exception& e) {
    return bad(e.what());
  }
  return cilium::json_response(404, json{{"error", "unknown control call " + m + " " + p}});
}

}  // namespace cn::fakes
