#include "common/nomad/client/curl_nomad_client.h"

#include <algorithm>
#include <charconv>

#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include "common/http/error_text.h"
#include "common/nomad/model/ndjson_framer.h"

namespace cn::nomad {

namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// Nomad caps a blocking query's wait at 300 s and treats 0 as 300 s (nomad/rpc.go in
// hashicorp/nomad: maxQueryTime, defaultQueryTime).
constexpr seconds kMaxBlockingWait{300};
// A bound on pages of one list: a server looping on next_token cannot hold a caller forever.
constexpr int kMaxListPages = 1000;

std::optional<std::uint64_t> parse_index(std::optional<std::string_view> header) {
  if (!header || header->empty()) return std::nullopt;
  std::uint64_t v = 0;
  auto [ptr, ec] = std::from_chars(header->data(), header->data() + header->size(), v);
  if (ec != std::errc{} || ptr != header->data() + header->size()) return std::nullopt;
  return v;
}

http::HttpClientConfig http_config(const NomadClientConfig& c, http::HttpTarget target,
                                   const std::shared_ptr<spdlog::logger>& log, Clock& clock) {
  http::HttpClientConfig h;
  h.clock = &clock;
  h.target = std::move(target);
  h.tls.ca_file = c.ca_cert;
  h.tls.ca_path = c.ca_path;
  h.tls.client_cert = c.client_cert;
  h.tls.client_key = c.client_key;
  h.tls.server_name = c.tls_server_name;
  h.tls.skip_verify = c.skip_verify;
  if (!c.token.empty()) h.default_headers.add("X-Nomad-Token", c.token);
  h.connect_timeout = c.connect_timeout;
  h.default_timeout = c.request_timeout;
  h.user_agent = "cilium-nomad-labeler/" CN_VERSION;
  h.log = log;
  return h;
}

}  // namespace

Result<http::HttpTarget> nomad_target(std::string_view address) {
  if (address.starts_with("unix://")) {
    std::string path(address.substr(7));
    if (path.empty() || path.front() != '/')
      return fail("unix:// needs an absolute socket path (unix:///secrets/api.sock)");
    return http::HttpTarget::unix_socket(std::move(path), "127.0.0.1");
  }
  if (!address.starts_with("http://") && !address.starts_with("https://")) {
    return fail("address must start with http://, https:// or unix://");
  }
  auto t = http::HttpTarget::url(address);
  if (!t) {
    return fail(t.error().message +
                " (expected http://HOST[:PORT], https://HOST[:PORT] or unix:///PATH)");
  }
  return t;
}

Result<std::unique_ptr<CurlNomadClient>> CurlNomadClient::create(
    NomadClientConfig config, Clock& clock, std::shared_ptr<spdlog::logger> log) {
  auto target = nomad_target(config.address);
  if (!target) return std::unexpected(target.error());
  if (!log) log = spdlog::default_logger();
  return std::unique_ptr<CurlNomadClient>(
      new CurlNomadClient(std::move(config), std::move(*target), clock, std::move(log)));
}

CurlNomadClient::CurlNomadClient(NomadClientConfig config, http::HttpTarget target, Clock& clock,
                                 std::shared_ptr<spdlog::logger> log)
    : config_(std::move(config)),
      clock_(clock),
      log_(std::move(log)),
      http_(http_config(config_, std::move(target), log_, clock_)),
      retry_jitter_(BackoffJitter::seed_or_random(config_.retry_seed)) {}

std::string CurlNomadClient::finish(http::Target target) const {
  if (!config_.region.empty()) target.query("region", config_.region);
  return target.str();
}

Error CurlNomadClient::error_from(const http::Response& response) const {
  std::string text = http::body_excerpt(response.body);
  if (text.empty()) text = "HTTP " + std::to_string(response.status);
  return http_error(response.status, http::redact(std::move(text), config_.token));
}

Error CurlNomadClient::error_from(Error failure) const {
  failure.message = http::redact(std::move(failure.message), config_.token);
  return failure;
}

Result<http::Response> CurlNomadClient::get(const std::string& target, Deadline deadline,
                                            milliseconds cap) {
  http::Request req;
  req.method = http::Method::get;
  req.target = target;
  return send(std::move(req), std::move(deadline), cap, {});
}

Result<http::Response> CurlNomadClient::send(http::Request req, Deadline deadline, milliseconds cap,
                                             std::optional<int> also_accept) {
  const std::string what =
      std::string(http::to_string(req.method)) + " " + req.target.substr(0, req.target.find('?'));
  auto res = http::with_retry(http::RetryRun{config_.retry,
                                             retry_jitter_,
                                             clock_,
                                             deadline.at,
                                             deadline.stop,
                                             {},
                                             log_.get(),
                                             what.c_str()},
                              [&](milliseconds left) {
                                req.timeout = std::min(left, cap);
                                return http_.send(req, deadline.stop);
                              });
  if (!res) return std::unexpected(error_from(res.error()));
  const bool success = res->status >= 200 && res->status < 300;
  if (!success && res->status != also_accept) {
    Error e = error_from(*res);
    log_->debug("nomad error request=\"{}\" status={} message=\"{}\"", what, e.status, e.message);
    return std::unexpected(std::move(e));
  }
  return std::move(*res);
}

Result<std::uint64_t> CurlNomadClient::get_pages(
    const ListQuery& query, const Deadline& deadline,
    const std::function<Status(std::string_view body)>& on_page) {
  // Nomad pages lists (default 0 = all, but a server may cap it): follow X-Nomad-NextToken so
  // that a long list is never mistaken for a short one, which would read as deletions.
  std::uint64_t first_index = 0;
  std::string next_token;
  for (int page = 0;; ++page) {
    http::Target target = query.target();
    // Only the first page blocks: later pages must answer at once from the same snapshot.
    const milliseconds cap = blocking_cap(target, page == 0 ? query.index : 0, query.wait);
    if (!next_token.empty()) target.query("next_token", next_token);
    auto res = get(finish(std::move(target)), deadline, cap);
    if (!res) return std::unexpected(res.error());
    if (page == 0) {
      auto header = parse_index(res->headers.get("X-Nomad-Index"));
      if (!header && query.index_required) {
        return fail(ErrorKind::bad_answer,
                    std::string(query.what) + " answer without a valid X-Nomad-Index");
      }
      first_index = header.value_or(0);
    }
    if (auto ok = on_page(res->body); !ok) return std::unexpected(ok.error());
    next_token = std::string(res->headers.get("X-Nomad-NextToken").value_or(""));
    if (next_token.empty()) return first_index;
    if (page >= kMaxListPages)
      return fail(ErrorKind::bad_answer, std::string(query.what) + ": more than " +
                                             std::to_string(kMaxListPages) + " pages");
  }
}

Result<std::string> CurlNomadClient::local_node_id(Deadline deadline) {
  auto res = get(finish(http::Target("/v1/agent/self")), deadline, config_.request_timeout);
  if (!res) return std::unexpected(res.error());
  auto doc = nlohmann::json::parse(res->body, nullptr, false);
  if (doc.is_discarded() || !doc.is_object())
    return fail(ErrorKind::bad_answer, "/v1/agent/self: body is not a JSON object");
  // contains() is false, never a throw, when a level on the way is missing or not an object.
  static const nlohmann::json::json_pointer kNodeId("/stats/client/node_id");
  const auto* node_id = doc.contains(kNodeId) ? &doc.at(kNodeId) : nullptr;
  if (node_id == nullptr || !node_id->is_string() ||
      node_id->get_ref<const std::string&>().empty()) {
    return fail(ErrorKind::bad_answer,
                "/v1/agent/self has no stats.client.node_id (is the agent a client?)");
  }
  return node_id->get<std::string>();
}

Result<Allocation> CurlNomadClient::allocation(std::string_view alloc_id, Deadline deadline) {
  auto res = get(finish(http::Target("/v1/allocation/" + http::percent_encode(alloc_id))), deadline,
                 config_.request_timeout);
  if (!res) return std::unexpected(res.error());
  return http::refused_answer(parse_allocation_text(res->body));
}

Result<Job> CurlNomadClient::job(std::string_view nomad_namespace, std::string_view job_id,
                                 Deadline deadline) {
  http::Target target("/v1/job/" + http::percent_encode(job_id));
  target.query("namespace", nomad_namespace);
  auto res = get(finish(std::move(target)), deadline, config_.request_timeout);
  if (!res) return std::unexpected(res.error());
  return http::refused_answer(parse_job_text(res->body));
}

milliseconds CurlNomadClient::blocking_cap(http::Target& target, std::uint64_t index,
                                           seconds wait) const {
  if (index == 0) return config_.request_timeout;
  const seconds effective =
      (wait.count() <= 0 || wait > kMaxBlockingWait) ? kMaxBlockingWait : wait;
  target.query("index", std::to_string(index));
  if (wait.count() > 0)
    target.query("wait", std::to_string(std::min(wait, kMaxBlockingWait).count()) + "s");
  return std::chrono::duration_cast<milliseconds>(effective) +
         std::chrono::duration_cast<milliseconds>(effective) / 16 + config_.blocking_margin;
}

Result<Indexed<AllocationList>> CurlNomadClient::node_allocations(
    std::string_view node_id, std::uint64_t index, seconds wait, MonoTime deadline,
    std::stop_token stop, const AllocationSelector& with_job) {
  http::Target target("/v1/node/" + http::percent_encode(node_id) + "/allocations");
  const milliseconds cap = blocking_cap(target, index, wait);
  auto res = get(finish(std::move(target)), Deadline{deadline, std::move(stop)}, cap);
  if (!res) return std::unexpected(res.error());
  auto new_index = parse_index(res->headers.get("X-Nomad-Index"));
  if (!new_index)
    return fail(ErrorKind::bad_answer,
                "node allocations answer without a valid X-Nomad-Index header");
  auto list = http::refused_answer(parse_allocation_list(res->body, with_job));
  if (!list) return std::unexpected(list.error());
  return Indexed<AllocationList>{std::move(*list), *new_index};
}

Status CurlNomadClient::event_stream(const EventStreamQuery& query,
                                     const std::function<bool(std::string_view line)>& on_line,
                                     milliseconds idle_timeout, std::stop_token stop) {
  // No topic means every topic (and a management token): never ask for that by accident.
  if (query.topic.empty()) return fail("event stream needs an explicit topic");
  http::Target target("/v1/event/stream");
  target.query("topic", query.topic);
  target.query("namespace", query.nomad_namespace);
  target.query("index", std::to_string(query.index));
  http::Request req;
  req.target = finish(std::move(target));

  NdjsonFramer framer;
  std::optional<Error> framing_error;
  std::uint64_t lines = 0;
  auto on_data = [&](std::string_view chunk) {
    auto got = framer.feed(chunk);
    if (!got) {
      framing_error = Error{ErrorKind::bad_answer, "event stream: " + got.error().message, 0, 0};
      return false;
    }
    for (const std::string& line : *got) {
      ++lines;
      if (!on_line(line)) return false;
    }
    return true;
  };
  http::StreamOptions options;
  options.idle_timeout = idle_timeout;
  log_->debug("nomad event stream opening topic={} namespace={} index={}", query.topic,
              query.nomad_namespace, query.index);
  auto res = http_.stream(req, on_data, options, std::move(stop));
  if (!res) {
    if (res.error().kind == ErrorKind::timeout && idle_timeout.count() > 0) {
      return fail(
          ErrorKind::timeout,
          "event stream idle for " + std::to_string(idle_timeout.count()) + " ms (no heartbeat)");
    }
    return std::unexpected(error_from(res.error()));
  }
  if (res->status != 200) {
    http::Response as_response{res->status, {}, res->error_body};
    return std::unexpected(error_from(as_response));
  }
  if (framing_error) return std::unexpected(*framing_error);
  switch (res->end) {
    case http::StreamEnd::callback:
    case http::StreamEnd::stopped:
      return {};
    case http::StreamEnd::eof:
      break;
  }
  // A stream never ends on its own: EOF is a server restart, a dropped subscriber, a revoked
  // token or (Nomad >= 1.11.2) a denied subscription before the first heartbeat.
  if (auto tail = framer.finish(); !tail) {
    return fail(ErrorKind::transport,
                http::redact("event stream ended: " + tail.error().message, config_.token));
  }
  if (lines == 0)
    return fail(ErrorKind::transport,
                "event stream ended before the first heartbeat (denied subscription?)");
  return fail(ErrorKind::transport, "event stream ended");
}

Result<Indexed<std::vector<VariableMeta>>> CurlNomadClient::variables(
    std::string_view nomad_namespace, std::string_view prefix, std::uint64_t index, seconds wait,
    MonoTime deadline, std::stop_token stop) {
  ListQuery query;
  query.target = [&] {
    http::Target target("/v1/vars");
    target.query("prefix", prefix);
    target.query("namespace", nomad_namespace);
    return target;
  };
  query.what = "variable list";
  query.index = index;
  query.wait = wait;
  query.index_required = true;
  return get_list(query, Deadline{deadline, std::move(stop)}, &parse_variable_list_text);
}

Result<std::vector<NodeStub>> CurlNomadClient::nodes(Deadline deadline) {
  // Node.List pages on next_token like the variables (nomad/node_endpoint.go in hashicorp/nomad):
  // a page missed would read as nodes gone from Nomad, which node reaping acts on.
  ListQuery query;
  query.target = [] { return http::Target("/v1/nodes"); };
  query.what = "node list";
  auto listed = get_list(query, deadline, &parse_node_list_text);
  if (!listed) return std::unexpected(listed.error());
  return std::move(listed->value);
}

Result<Variable> CurlNomadClient::variable(std::string_view nomad_namespace, std::string_view path,
                                           Deadline deadline) {
  // The path keeps its slashes: Nomad routes /v1/var/<path with slashes>.
  http::Target target("/v1/var/" + http::percent_encode(path, "/"));
  target.query("namespace", nomad_namespace);
  auto res = get(finish(std::move(target)), std::move(deadline), config_.request_timeout);
  if (!res) return std::unexpected(res.error());
  return http::refused_answer(parse_variable_text(res->body));
}

}  // namespace cn::nomad
