#pragma once
// EtcdApi over etcd's v3 JSON gateway with libcurl (cn::http::HttpClient), configured from the
// Cilium agent's etcd configuration file (etcd_config.h). Thread-safe: duties may call it from
// several threads; each call borrows its own connection.
//
// Endpoints: one HttpClient each. A call goes to the endpoint that answered last; when it gives
// no answer (transport error, timeout, or etcd's UNAVAILABLE) the next one is tried, within the
// same deadline, each endpoint at most once per call. There is no retry loop beyond that: the
// duties retry on their own schedule.
//
// Auth: with a username, the client authenticates (POST /v3/auth/authenticate) before its first
// call and sends the token in the Authorization header; when etcd calls the token invalid it
// authenticates once more and repeats the call once. Neither password nor token is logged or put
// in an error message.
#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include <spdlog/fwd.h>

#include "common/etcd/etcd_api.h"
#include "common/etcd/etcd_config.h"
#include "common/http/http_client.h"
#include "common/util/clock.h"
#include "common/util/mutex.h"

namespace cn::etcd {

struct EtcdClientOptions {
  // Short on purpose: a dead endpoint must leave most of a call's deadline to the next one.
  std::chrono::milliseconds connect_timeout{2'000};
  std::shared_ptr<spdlog::logger> log;  // nullptr: spdlog's default logger
  // What deadlines are measured against: the caller's clock, so that a deadline computed from
  // it means the same here. nullptr: the system clock.
  Clock* clock = nullptr;
};

class CurlEtcdClient final : public EtcdApi {
 public:
  // Fails (invalid) on an endpoint the configuration cannot use.
  [[nodiscard]] static Result<std::unique_ptr<CurlEtcdClient>> create(
      EtcdConfig config, EtcdClientOptions options = {});
  ~CurlEtcdClient() override;

  [[nodiscard]] Result<RangePage> range(const RangeRequest& request, Deadline deadline) override;
  [[nodiscard]] Result<TxnResult> txn(const TxnRequest& request, Deadline deadline) override;
  [[nodiscard]] Result<Revision> put(std::string_view key, std::string_view value, LeaseId lease,
                                     Deadline deadline) override;
  [[nodiscard]] Result<Lease> grant_lease(std::chrono::seconds ttl, Deadline deadline) override;
  [[nodiscard]] Result<std::chrono::seconds> keep_alive(LeaseId lease, Deadline deadline) override;
  [[nodiscard]] Status revoke_lease(LeaseId lease, Deadline deadline) override;
  std::string describe() const override;

  // POST `body` to `path` ("/v3/kv/compaction"), failover and auth as every call: the 2xx body.
  // For requests the interface does not name (tests compact the store through it).
  [[nodiscard]] Result<std::string> post(std::string_view path, const std::string& body,
                                         const Deadline& deadline);

 private:
  struct Endpoint {
    std::string url;
    std::unique_ptr<http::HttpClient> http;
  };

  CurlEtcdClient(EtcdConfig config, std::vector<Endpoint> endpoints, Clock& clock,
                 std::shared_ptr<spdlog::logger> log);

  [[nodiscard]] Result<std::string> post_to(std::size_t index, std::string_view path,
                                            const std::string& body, const Deadline& deadline);
  [[nodiscard]] Result<http::Response> send(std::size_t index, std::string_view path,
                                            const std::string& body, const std::string& token,
                                            const Deadline& deadline);
  [[nodiscard]] Result<std::string> auth_token(std::size_t index, const Deadline& deadline,
                                               bool renew);

  const EtcdConfig config_;
  const std::vector<Endpoint> endpoints_;
  Clock& clock_;
  const std::shared_ptr<spdlog::logger> log_;

  mutable Mutex mu_;
  std::size_t preferred_ GUARDED_BY(mu_) = 0;
  std::string token_ GUARDED_BY(mu_);
};

}  // namespace cn::etcd
