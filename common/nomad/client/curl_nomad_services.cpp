// CurlNomadClient's NomadServicesApi: service registrations, check results, variable writes.
#include <nlohmann/json.hpp>

#include "common/http/error_text.h"
#include "common/nomad/client/curl_nomad_client.h"

namespace cn::nomad {

Result<Indexed<std::vector<ServiceListEntry>>> CurlNomadClient::service_list(
    std::uint64_t index, std::chrono::seconds wait, MonoTime deadline, std::stop_token stop) {
  ListQuery query;
  query.target = [] {
    http::Target target("/v1/services");
    target.query("namespace", "*");
    return target;
  };
  query.what = "service list";
  query.index = index;
  query.wait = wait;
  // A token that may read no namespace gets [] and no index
  // (nomad/service_registration_endpoint.go in hashicorp/nomad): 0 then, never a guess.
  query.index_required = false;
  return get_list(query, Deadline{deadline, std::move(stop)}, &parse_service_list_text);
}

Result<Indexed<std::vector<ServiceRegistration>>> CurlNomadClient::service_registrations(
    std::string_view nomad_namespace, std::string_view service_name, Deadline deadline) {
  ListQuery query;
  query.target = [&] {
    http::Target target("/v1/service/" + http::percent_encode(service_name));
    target.query("namespace", nomad_namespace);
    return target;
  };
  query.what = "service registrations";
  return get_list(query, deadline, &parse_service_registrations_text);
}

Result<std::vector<CheckResult>> CurlNomadClient::alloc_checks(std::string_view alloc_id,
                                                               Deadline deadline) {
  http::Target target("/v1/client/allocation/" + http::percent_encode(alloc_id) + "/checks");
  auto res = get(finish(std::move(target)), std::move(deadline), config_.request_timeout);
  if (!res) return std::unexpected(res.error());
  return http::refused_answer(parse_alloc_checks_text(res->body));
}

namespace {

// 409 is the check-and-set's "no": its body is the variable as Nomad holds it
// (command/agent/variable_endpoint.go in hashicorp/nomad).
constexpr int kConflict = 409;

}  // namespace

Result<VariableWrite> CurlNomadClient::put_variable(std::string_view nomad_namespace,
                                                    std::string_view path,
                                                    const std::map<std::string, std::string>& items,
                                                    std::uint64_t cas, Deadline deadline) {
  nlohmann::json body = {{"Namespace", nomad_namespace}, {"Path", path}, {"Items", items}};
  http::Request req;
  req.method = http::Method::put;
  req.body = body.dump();
  return write_variable(std::move(req), nomad_namespace, path, cas, std::move(deadline));
}

Result<VariableWrite> CurlNomadClient::delete_variable(std::string_view nomad_namespace,
                                                       std::string_view path, std::uint64_t cas,
                                                       Deadline deadline) {
  http::Request req;
  req.method = http::Method::del;
  return write_variable(std::move(req), nomad_namespace, path, cas, std::move(deadline));
}

Result<VariableWrite> CurlNomadClient::write_variable(http::Request req,
                                                      std::string_view nomad_namespace,
                                                      std::string_view path, std::uint64_t cas,
                                                      Deadline deadline) {
  http::Target target("/v1/var/" + http::percent_encode(path, "/"));
  target.query("namespace", nomad_namespace);
  target.query("cas", std::to_string(cas));
  req.target = finish(std::move(target));
  auto res = send(std::move(req), std::move(deadline), config_.request_timeout, kConflict);
  if (!res) return std::unexpected(res.error());
  if (res->status != kConflict && res->body.empty()) return VariableWrite{true, Variable{}};
  auto current = http::refused_answer(parse_variable_text(res->body));
  if (!current) {
    // A conflict about a variable that does not exist may carry a zero value without a path.
    if (res->status != kConflict) return std::unexpected(current.error());
    return VariableWrite{false, Variable{}};
  }
  return VariableWrite{res->status != kConflict, std::move(*current)};
}

}  // namespace cn::nomad
