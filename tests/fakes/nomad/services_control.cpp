// /_fake/ calls for native services: what the client's hooks, the scheduler and the GC do to
// registrations and check results, for tests that run fake-nomad as a process.
#include "tests/fakes/http/status_error.h"
#include "tests/fakes/nomad/fake_nomad.h"
#include "tests/fakes/nomad/http_util.h"

namespace cn::fakes {

using nlohmann::json;

namespace {

HttpResponse control_error(const Error& e) {
  return text_error(e.status >= 400 ? e.status : 400, e.message);
}

HttpResponse control_status(const Status& st) {
  return st ? control_reply(json{{"ok", true}}) : control_error(st.error());
}

}  // namespace

std::optional<HttpResponse> FakeNomad::route_control_services(const HttpRequest& request,
                                                              const std::vector<std::string>& s,
                                                              const json& body) {
  const std::string& m = request.method;
  if (s.size() == 2 && s[1] == "services" && m == "GET") {
    json list = json::array();
    for (const auto& r : service_registrations()) {
      list.push_back(encode_service_registration(r));
    }
    return control_reply({{"index", service_registrations_index()}, {"services", list}});
  }
  if (s.size() != 4 || s[1] != "allocs") return std::nullopt;
  const std::string& id = s[2];
  const std::string& action = s[3];
  if (action == "services" && m == "POST") {
    RegisterServicesOptions o;
    o.task = body.value("task", "");
    o.canary = body.value("canary", false);
    o.alloc_address = body.value("alloc_address", "");
    auto ids = register_services(id, o);
    if (!ids) return control_error(ids.error());
    return control_reply({{"ids", *ids}});
  }
  if (action == "services" && m == "DELETE") {
    std::optional<std::string> task;
    if (body.contains("task")) task = body.at("task").get<std::string>();
    return control_status(deregister_services(id, task));
  }
  if (action == "lost" && m == "POST") return control_status(mark_alloc_lost(id));
  if (action == "update" && m == "POST") return control_status(update_alloc_in_place(id));
  if (action == "gc" && m == "POST") return control_status(gc_allocs({id}));
  if (action == "checks" && m == "POST") {
    return control_status(set_check_status(id, body.at("check").get<std::string>(),
                                           body.at("status").get<std::string>(),
                                           body.value("status_code", 0), body.value("output", "")));
  }
  return std::nullopt;
}

}  // namespace cn::fakes
