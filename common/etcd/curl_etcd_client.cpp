#include "common/etcd/curl_etcd_client.h"

#include <algorithm>
#include <array>

#include <spdlog/spdlog.h>

#include "common/etcd/etcd_error.h"
#include "common/etcd/etcd_json.h"

namespace cn::etcd {
namespace {

using std::chrono::milliseconds;

// Less time than this left in a call: no further endpoint is tried (see post()).
constexpr milliseconds kShortestEndpointTry{50};

// No answer from this endpoint: another one may give it.
bool try_next_endpoint(const Error& error) {
  return error.kind == ErrorKind::transport || error.kind == ErrorKind::timeout;
}

// With TLS 1.3 the server checks our certificate after the client has finished its handshake,
// so its refusal (a TLS alert) arrives on the first read and curl reports a receive error, which
// the HTTP layer calls transport. It is a certificate problem for an operator, not a network
// blip: tls, and no failover (every endpoint gets the same certificate).
bool peer_refused_our_certificate(const Error& error) {
  if (error.kind != ErrorKind::transport) return false;
  constexpr std::array<std::string_view, 4> kAlerts{
      "alert bad certificate", "alert certificate required", "alert unknown ca",
      "alert certificate expired"};
  return std::ranges::any_of(kAlerts, [&](std::string_view alert) {
    return error.message.find(alert) != std::string::npos;
  });
}

Error deadline_passed(std::string_view path) {
  return Error{ErrorKind::timeout, "etcd: deadline passed before " + std::string(path), 0, 0};
}

}  // namespace

Result<std::unique_ptr<CurlEtcdClient>> CurlEtcdClient::create(EtcdConfig config,
                                                               EtcdClientOptions options) {
  if (!options.log) options.log = spdlog::default_logger();
  if (config.endpoints.empty()) {
    return fail(ErrorKind::invalid, "etcd configuration " + config.source + ": no endpoints");
  }
  Clock& clock = options.clock ? *options.clock : system_clock();
  std::vector<Endpoint> endpoints;
  for (const auto& written : config.endpoints) {
    auto resolved = resolve_endpoint(config, written);
    if (!resolved) return std::unexpected(resolved.error());
    auto target = http::HttpTarget::url(resolved->url);
    if (!target) return std::unexpected(target.error());
    http::HttpClientConfig h;
    h.target = std::move(*target);
    h.tls = std::move(resolved->tls);
    h.connect_timeout = options.connect_timeout;
    h.user_agent = "cilium-nomad-labeler/" CN_VERSION;
    h.log = options.log;
    h.clock = &clock;
    endpoints.push_back(
        Endpoint{std::move(resolved->url), std::make_unique<http::HttpClient>(std::move(h))});
  }
  return std::unique_ptr<CurlEtcdClient>(
      new CurlEtcdClient(std::move(config), std::move(endpoints), clock, std::move(options.log)));
}

CurlEtcdClient::CurlEtcdClient(EtcdConfig config, std::vector<Endpoint> endpoints, Clock& clock,
                               std::shared_ptr<spdlog::logger> log)
    : config_(std::move(config)),
      endpoints_(std::move(endpoints)),
      clock_(clock),
      log_(std::move(log)) {}

CurlEtcdClient::~CurlEtcdClient() = default;

std::string CurlEtcdClient::describe() const {
  MutexLock lock(mu_);
  return endpoints_[preferred_].url;
}

Result<std::string> CurlEtcdClient::post(std::string_view path, const std::string& body,
                                         const Deadline& deadline) {
  std::size_t start = 0;
  {
    MutexLock lock(mu_);
    start = preferred_;
  }
  Error last = deadline_passed(path);
  for (std::size_t i = 0; i < endpoints_.size(); ++i) {
    // A spent deadline tries no further endpoint: it would only be blamed (and skipped next
    // time) for the time the previous one used up. Nor does one with a few milliseconds left: a
    // healthy member cannot answer in that time, and blaming it would send the next call back to
    // the member that just timed out.
    if (i > 0 && deadline.at - clock_.now() < kShortestEndpointTry) break;
    const std::size_t index = (start + i) % endpoints_.size();
    auto res = post_to(index, path, body, deadline);
    if (res || !try_next_endpoint(res.error())) {
      MutexLock lock(mu_);
      preferred_ = index;
      return res;
    }
    last = std::move(res.error());
    log_->warn("etcd endpoint gave no answer endpoint={} request={} error=\"{}\"",
               endpoints_[index].url, path, last.message);
    // The next call starts with the next endpoint, even when this one used up the deadline.
    {
      MutexLock lock(mu_);
      if (preferred_ == index) preferred_ = (index + 1) % endpoints_.size();
    }
  }
  return std::unexpected(std::move(last));
}

Result<std::string> CurlEtcdClient::post_to(std::size_t index, std::string_view path,
                                            const std::string& body, const Deadline& deadline) {
  const bool auth = !config_.username.empty();
  std::string token;
  if (auth) {
    auto t = auth_token(index, deadline, false);
    if (!t) return std::unexpected(t.error());
    token = std::move(*t);
  }
  auto res = send(index, path, body, token, deadline);
  if (!res) return std::unexpected(res.error());
  if (res->status / 100 == 2) return std::move(res->body);
  Error error = etcd_error(res->status, res->body);
  if (!auth || !is_invalid_token(error)) return std::unexpected(std::move(error));

  log_->info("etcd auth token refused, authenticating again endpoint={}", endpoints_[index].url);
  auto renewed = auth_token(index, deadline, true);
  if (!renewed) return std::unexpected(renewed.error());
  res = send(index, path, body, *renewed, deadline);
  if (!res) return std::unexpected(res.error());
  if (res->status / 100 == 2) return std::move(res->body);
  return std::unexpected(etcd_error(res->status, res->body));
}

Result<http::Response> CurlEtcdClient::send(std::size_t index, std::string_view path,
                                            const std::string& body, const std::string& token,
                                            const Deadline& deadline) {
  if (deadline.stop.stop_requested()) {
    return fail(ErrorKind::cancelled, "etcd: " + std::string(path) + " cancelled");
  }
  // Rounded up: truncating would call a deadline with 0.4 ms left "passed" here while post()
  // saw it open and tried this endpoint, and the endpoint would be blamed for a call never sent.
  const auto left = std::chrono::ceil<milliseconds>(deadline.at - clock_.now());
  if (left <= milliseconds{0}) return std::unexpected(deadline_passed(path));
  http::Request req;
  req.method = http::Method::post;
  req.target = std::string(path);
  req.body = body;
  req.timeout = std::max(left, milliseconds{1});
  req.headers.set("Content-Type", "application/json");
  // etcd takes the bare token in this header (no "Bearer"). Headers are never logged.
  if (!token.empty()) req.headers.set("Authorization", token);
  auto res = endpoints_[index].http->send(req, deadline.stop);
  if (!res) {
    Error e = std::move(res.error());
    if (peer_refused_our_certificate(e)) e.kind = ErrorKind::tls;
    e.message = "etcd " + endpoints_[index].url + ": " + e.message;
    return std::unexpected(std::move(e));
  }
  return res;
}

Result<std::string> CurlEtcdClient::auth_token(std::size_t index, const Deadline& deadline,
                                               bool renew) {
  std::string stale;
  {
    MutexLock lock(mu_);
    if (!renew && !token_.empty()) return token_;
    stale = token_;
  }
  auto res = send(index, "/v3/auth/authenticate",
                  encode_authenticate(config_.username, config_.password), "", deadline);
  if (!res) return std::unexpected(res.error());
  if (res->status / 100 != 2) {
    Error e = etcd_error(res->status, res->body);
    e.message = "etcd authentication as " + config_.username + ": " + e.message;
    return std::unexpected(std::move(e));
  }
  auto token = decode_authenticate(res->body);
  if (!token) return std::unexpected(token.error());
  MutexLock lock(mu_);
  // Another thread may have renewed meanwhile; either token is fresh, keep the newest.
  if (token_ == stale) token_ = *token;
  return std::move(*token);
}

Result<RangePage> CurlEtcdClient::range(const RangeRequest& request, Deadline deadline) {
  auto body = post("/v3/kv/range", encode_range(request), deadline);
  if (!body) return std::unexpected(body.error());
  return decode_range(*body);
}

Result<TxnResult> CurlEtcdClient::txn(const TxnRequest& request, Deadline deadline) {
  auto body = post("/v3/kv/txn", encode_txn(request), deadline);
  if (!body) return std::unexpected(body.error());
  return decode_txn(*body);
}

Result<Revision> CurlEtcdClient::put(std::string_view key, std::string_view value, LeaseId lease,
                                     Deadline deadline) {
  auto body = post("/v3/kv/put", encode_put(key, value, lease), deadline);
  if (!body) return std::unexpected(body.error());
  return decode_put(*body);
}

Result<Lease> CurlEtcdClient::grant_lease(std::chrono::seconds ttl, Deadline deadline) {
  auto body = post("/v3/lease/grant", encode_lease_grant(ttl), deadline);
  if (!body) return std::unexpected(body.error());
  return decode_lease_grant(*body);
}

Result<std::chrono::seconds> CurlEtcdClient::keep_alive(LeaseId lease, Deadline deadline) {
  auto body = post("/v3/lease/keepalive", encode_lease_id(lease), deadline);
  if (!body) return std::unexpected(body.error());
  auto ttl = decode_keep_alive(*body);
  if (!ttl) return std::unexpected(ttl.error());
  if (ttl->count() <= 0) {
    return fail(ErrorKind::not_found,
                "etcd: lease " + std::to_string(lease) + " has expired or was revoked");
  }
  return ttl;
}

Status CurlEtcdClient::revoke_lease(LeaseId lease, Deadline deadline) {
  auto body = post("/v3/lease/revoke", encode_lease_id(lease), deadline);
  if (!body) return std::unexpected(body.error());
  return {};
}

}  // namespace cn::etcd
