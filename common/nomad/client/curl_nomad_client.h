#pragma once
// NomadApi over HTTP (libcurl through cn::http). Thread-safe: the labeler's workers may call
// any method concurrently; a blocking query or an event stream holds only its own connection.
#include <functional>
#include <iterator>
#include <memory>
#include <vector>

#include <spdlog/fwd.h>

#include "common/http/http_client.h"
#include "common/http/http_types.h"
#include "common/http/retry.h"
#include "common/http/url.h"
#include "common/nomad/client/nomad_api.h"
#include "common/nomad/client/nomad_client_config.h"
#include "common/nomad/client/nomad_services_api.h"

namespace cn::nomad {

// unix:///path -> that socket, requests addressed to http://127.0.0.1 as Nomad's Go client does;
// http(s)://host[:port] as is. Errors do not say where the address came from (a flag or the
// environment): the caller, which knows, puts that in front.
[[nodiscard]] Result<http::HttpTarget> nomad_target(std::string_view address);

class CurlNomadClient final : public NomadApi, public NomadServicesApi {
 public:
  // Fails on an unusable address. `clock` paces retries and turns deadlines into timeouts; it
  // must outlive the client.
  [[nodiscard]] static Result<std::unique_ptr<CurlNomadClient>> create(
      NomadClientConfig config, Clock& clock = system_clock(),
      std::shared_ptr<spdlog::logger> log = nullptr);

  [[nodiscard]] Result<std::string> local_node_id(Deadline deadline) override;
  [[nodiscard]] Result<Allocation> allocation(std::string_view alloc_id,
                                              Deadline deadline) override;
  [[nodiscard]] Result<Job> job(std::string_view nomad_namespace, std::string_view job_id,
                                Deadline deadline) override;
  [[nodiscard]] Result<Indexed<AllocationList>> node_allocations(
      std::string_view node_id, std::uint64_t index, std::chrono::seconds wait, MonoTime deadline,
      std::stop_token stop = {}, const AllocationSelector& with_job = {}) override;
  [[nodiscard]] Status event_stream(const EventStreamQuery& query,
                                    const std::function<bool(std::string_view line)>& on_line,
                                    std::chrono::milliseconds idle_timeout,
                                    std::stop_token stop) override;
  [[nodiscard]] Result<Indexed<std::vector<VariableMeta>>> variables(
      std::string_view nomad_namespace, std::string_view prefix, std::uint64_t index,
      std::chrono::seconds wait, MonoTime deadline, std::stop_token stop = {}) override;
  [[nodiscard]] Result<std::vector<NodeStub>> nodes(Deadline deadline) override;
  [[nodiscard]] Result<Variable> variable(std::string_view nomad_namespace, std::string_view path,
                                          Deadline deadline) override;

  // NomadServicesApi (curl_nomad_services.cpp).
  [[nodiscard]] Result<Indexed<std::vector<ServiceListEntry>>> service_list(
      std::uint64_t index, std::chrono::seconds wait, MonoTime deadline,
      std::stop_token stop = {}) override;
  [[nodiscard]] Result<Indexed<std::vector<ServiceRegistration>>> service_registrations(
      std::string_view nomad_namespace, std::string_view service_name, Deadline deadline) override;
  [[nodiscard]] Result<std::vector<CheckResult>> alloc_checks(std::string_view alloc_id,
                                                              Deadline deadline) override;
  [[nodiscard]] Result<VariableWrite> put_variable(std::string_view nomad_namespace,
                                                   std::string_view path,
                                                   const std::map<std::string, std::string>& items,
                                                   std::uint64_t cas, Deadline deadline) override;
  [[nodiscard]] Result<VariableWrite> delete_variable(std::string_view nomad_namespace,
                                                      std::string_view path, std::uint64_t cas,
                                                      Deadline deadline) override;

  const NomadClientConfig& config() const { return config_; }

 private:
  CurlNomadClient(NomadClientConfig config, http::HttpTarget target, Clock& clock,
                  std::shared_ptr<spdlog::logger> log);

  // GET with retries; any status but 200 becomes an Error with Nomad's text.
  [[nodiscard]] Result<http::Response> get(const std::string& target, Deadline deadline,
                                           std::chrono::milliseconds cap);
  // Any request with retries; a status other than 2xx and `also_accept` becomes an Error.
  [[nodiscard]] Result<http::Response> send(http::Request req, Deadline deadline,
                                            std::chrono::milliseconds cap,
                                            std::optional<int> also_accept);
  // A check-and-set PUT or DELETE of a variable: a conflict is an answer, not an error.
  [[nodiscard]] Result<VariableWrite> write_variable(http::Request req,
                                                     std::string_view nomad_namespace,
                                                     std::string_view path, std::uint64_t cas,
                                                     Deadline deadline);
  // One list query: its target (without paging), and how it blocks.
  struct ListQuery {
    std::function<http::Target()> target;
    std::string_view what;  // "variable list": names the list in errors
    std::uint64_t index = 0;
    std::chrono::seconds wait{0};
    // The answer must carry X-Nomad-Index; else a missing one reads as 0.
    bool index_required = false;
  };
  // Every page of a list (X-Nomad-NextToken), each body read by `parse` and its elements
  // appended in order; only the first page blocks on `index`. The index is the first page's.
  template <class T>
  [[nodiscard]] Result<Indexed<std::vector<T>>> get_list(
      const ListQuery& query, const Deadline& deadline,
      Result<std::vector<T>> (*parse)(std::string_view body));
  // get_list's engine: each page's body to `on_page`; returns the first page's index.
  [[nodiscard]] Result<std::uint64_t> get_pages(
      const ListQuery& query, const Deadline& deadline,
      const std::function<Status(std::string_view body)>& on_page);
  Error error_from(const http::Response& response) const;
  Error error_from(Error failure) const;
  // The read cap of a blocking query: Nomad holds it up to wait + wait/16 of jitter; past that
  // plus a margin the connection is dead, not slow. Adds index and wait to `target`.
  std::chrono::milliseconds blocking_cap(http::Target& target, std::uint64_t index,
                                         std::chrono::seconds wait) const;
  // Appends ?region= when configured.
  std::string finish(http::Target target) const;

  NomadClientConfig config_;
  Clock& clock_;
  std::shared_ptr<spdlog::logger> log_;
  http::HttpClient http_;
  BackoffJitter retry_jitter_;  // the in-call retries', shared by the worker threads
};

template <class T>
Result<Indexed<std::vector<T>>> CurlNomadClient::get_list(
    const ListQuery& query, const Deadline& deadline,
    Result<std::vector<T>> (*parse)(std::string_view body)) {
  Indexed<std::vector<T>> out;
  auto first_index = get_pages(query, deadline, [&](std::string_view body) -> Status {
    auto list = http::refused_answer(parse(body));
    if (!list) return std::unexpected(list.error());
    out.value.insert(out.value.end(), std::make_move_iterator(list->begin()),
                     std::make_move_iterator(list->end()));
    return {};
  });
  if (!first_index) return std::unexpected(first_index.error());
  out.index = *first_index;
  return out;
}

}  // namespace cn::nomad
