#include "common/http/http_client.h"

#include <vector>

#include <spdlog/spdlog.h>

#include "common/http/detail/curl_handles.h"
#include "common/http/detail/transfer.h"
#include "common/http/unix_socket_error.h"
#include "common/util/mutex.h"

namespace cn::http {

namespace {

using detail::CurlEasy;
using detail::CurlMulti;
using detail::CurlSlist;

bool header_safe(std::string_view s) {
  return s.find_first_of("\r\n") == std::string_view::npos;
}

std::string path_only(const std::string& target) {
  return target.substr(0, target.find('?'));
}

ErrorKind classify(CURLcode code) {
  switch (code) {
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_CONNECT:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
      return ErrorKind::transport;
    case CURLE_OPERATION_TIMEDOUT:
      return ErrorKind::timeout;
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_CRL_BADFILE:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
    case CURLE_SSL_INVALIDCERTSTATUS:
    case CURLE_SSL_ENGINE_NOTFOUND:
    case CURLE_SSL_ENGINE_SETFAILED:
    case CURLE_SSL_ENGINE_INITFAILED:
    case CURLE_SSL_CLIENTCERT:
    case CURLE_USE_SSL_FAILED:
      return ErrorKind::tls;
    case CURLE_ABORTED_BY_CALLBACK:
      return ErrorKind::cancelled;
    case CURLE_URL_MALFORMAT:
    case CURLE_UNSUPPORTED_PROTOCOL:
    case CURLE_BAD_FUNCTION_ARGUMENT:
    case CURLE_OUT_OF_MEMORY:
      return ErrorKind::invalid;
    default:
      return ErrorKind::transport;  // a server that broke the protocol: it may do better next time
  }
}

long as_long_ms(std::chrono::milliseconds d) {
  return static_cast<long>(std::max<long long>(d.count(), 1));
}

}  // namespace

class HttpClient::Impl {
  // One connection slot: the multi handle owns the connection cache, the easy handle the
  // request. A slot is used by one thread at a time. Nested rather than in the anonymous
  // namespace, which would give Impl internal linkage (-Wsubobject-linkage in a unity build).
  struct Slot {
    CurlMulti multi;
    CurlEasy easy;
    CurlSlist connect_to;  // CURLOPT_CONNECT_TO keeps a pointer: owned per slot, built once
  };

 public:
  explicit Impl(HttpClientConfig config)
      : cfg_(std::move(config)), log_(cfg_.log ? cfg_.log : spdlog::default_logger()) {
    detail::ensure_curl_global_init();
    const HttpTarget& t = cfg_.target;
    if (t.is_unix()) {
      url_base_ = "http://" + url_host(t.host());
    } else if (!cfg_.tls.server_name.empty() && t.is_https()) {
      const std::string port = std::to_string(t.port());
      url_base_ = "https://" + url_host(cfg_.tls.server_name) + ":" + port + t.path_prefix();
      connect_to_ =
          url_host(cfg_.tls.server_name) + ":" + port + ":" + url_host(t.host()) + ":" + port;
      host_header_ = url_host(t.host()) + ":" + port;
    } else {
      url_base_ = t.scheme() + "://" + url_host(t.host()) + ":" + std::to_string(t.port()) +
                  t.path_prefix();
    }
  }

  HttpResult<Response> send(const Request& req, std::stop_token stop) {
    detail::TransferSink sink{nullptr, cfg_.max_body_bytes};
    auto timeout = req.timeout.count() > 0 ? req.timeout : cfg_.default_timeout;
    auto out = run(req, sink, timeout, {}, stop);
    if (!out) return std::unexpected(out.error());
    return Response{out->status, std::move(out->headers), std::move(out->body)};
  }

  HttpResult<StreamResult> stream(const Request& req,
                                  const std::function<bool(std::string_view)>& on_data,
                                  const StreamOptions& options, std::stop_token stop) {
    detail::TransferSink sink{&on_data, options.max_error_body};
    auto out = run(req, sink, std::chrono::milliseconds{0}, options.idle_timeout, stop);
    if (!out) return std::unexpected(out.error());
    StreamResult r;
    r.status = out->status;
    r.headers = std::move(out->headers);
    const bool success = r.status >= 200 && r.status < 300;
    if (!success) r.error_body = std::move(out->body);
    r.end = out->stopped            ? StreamEnd::stopped
            : out->callback_stopped ? StreamEnd::callback
                                    : StreamEnd::eof;
    return r;
  }

  const HttpTarget& target() const { return cfg_.target; }

  std::size_t idle_connections() const {
    MutexLock lock(mu_);
    return idle_.size();
  }

 private:
  HttpResult<detail::TransferOutcome> run(const Request& req, const detail::TransferSink& sink,
                                          std::chrono::milliseconds total_timeout,
                                          std::chrono::milliseconds idle_timeout,
                                          const std::stop_token& stop) {
    const std::string what = std::string(to_string(req.method)) + " " + path_only(req.target);
    auto failure = [&](ErrorKind kind, const std::string& detail_text) {
      Error f{kind, what + " (" + cfg_.target.describe() + "): " + detail_text, 0, 0};
      log_->debug("http failure method={} path={} target={} kind={} detail=\"{}\"",
                  to_string(req.method), path_only(req.target), cfg_.target.describe(),
                  to_string(kind), detail_text);
      return std::unexpected(std::move(f));
    };
    if (req.target.empty() || req.target.front() != '/' || !header_safe(req.target) ||
        req.target.find(' ') != std::string::npos) {
      return failure(ErrorKind::invalid,
                     "request target must be an encoded path starting with '/'");
    }
    if (stop.stop_requested()) return failure(ErrorKind::cancelled, "stopped before sending");

    std::unique_ptr<Slot> slot;
    try {
      slot = acquire();
    } catch (const std::exception& e) {
      return failure(ErrorKind::invalid, e.what());
    }
    CurlSlist headers;
    if (!build_headers(req, headers))
      return failure(ErrorKind::invalid, "header names and values must not contain CR or LF");
    configure(*slot, req, headers, total_timeout);

    Clock& clock = cfg_.clock != nullptr ? *cfg_.clock : system_clock();
    const MonoTime started = clock.now();
    detail::TransferOutcome out =
        detail::run_transfer(slot->multi, slot->easy, sink, idle_timeout, stop);
    const auto ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(clock.now() - started).count();

    const bool clean = !out.stopped && !out.idle_expired && out.code == CURLE_OK;
    // Only a connection that finished its exchange cleanly may carry the next request.
    if (clean) release(std::move(slot));

    if (out.stopped) {
      if (sink.on_data != nullptr) return out;  // a requested end of a stream is not a failure
      return failure(ErrorKind::cancelled, "stopped");
    }
    if (out.idle_expired) {
      return failure(ErrorKind::timeout,
                     "no data for " + std::to_string(idle_timeout.count()) + " ms");
    }
    if (out.code == CURLE_WRITE_ERROR && (out.callback_stopped || out.error_body_full)) {
      out.code = CURLE_OK;
    } else if (out.code == CURLE_WRITE_ERROR && out.too_large) {
      return failure(ErrorKind::bad_answer,
                     "response body larger than " + std::to_string(sink.max_body) + " bytes");
    } else if (out.code == CURLE_COULDNT_CONNECT && cfg_.target.is_unix()) {
      return failure(classify(out.code),
                     unix_connect_error_text(cfg_.target.socket_path(), out.curl_message));
    } else if (out.code != CURLE_OK) {
      return failure(classify(out.code), out.curl_message);
    }
    log_->debug("http request method={} path={} target={} status={} ms={}", to_string(req.method),
                path_only(req.target), cfg_.target.describe(), out.status, ms);
    return out;
  }

  bool build_headers(const Request& req, CurlSlist& list) const {
    auto add = [&](const std::string& name, const std::string& value) {
      if (!header_safe(name) || !header_safe(value) || name.find(':') != std::string::npos)
        return false;
      return list.append(name + ": " + value);
    };
    for (const auto& [name, value] : cfg_.default_headers.entries()) {
      if (req.headers.contains(name)) continue;
      if (!add(name, value)) return false;
    }
    for (const auto& [name, value] : req.headers.entries()) {
      if (!add(name, value)) return false;
    }
    bool ok = true;
    if (!req.headers.contains("Accept")) ok = ok && list.append("Accept: application/json");
    if (req.body && !req.headers.contains("Content-Type"))
      ok = ok && list.append("Content-Type: application/json");
    // No "Expect: 100-continue" round trip: the agents answer at once.
    ok = ok && list.append("Expect:");
    if (!host_header_.empty()) ok = ok && list.append("Host: " + host_header_);
    return ok;
  }

  void configure(Slot& slot, const Request& req, const CurlSlist& headers,
                 std::chrono::milliseconds total_timeout) {
    CURL* e = slot.easy.get();
    slot.easy.reset();
    const std::string url = url_base_ + req.target;
    curl_easy_setopt(e, CURLOPT_URL, url.c_str());
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);  // no SIGALRM tricks in a threaded daemon
    curl_easy_setopt(e, CURLOPT_NOPROXY, "*");  // see the header: never through a node proxy
    curl_easy_setopt(e, CURLOPT_HTTP_VERSION, static_cast<long>(CURL_HTTP_VERSION_1_1));
    curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);  // blocking queries idle for minutes
    curl_easy_setopt(e, CURLOPT_USERAGENT, cfg_.user_agent.c_str());
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, as_long_ms(cfg_.connect_timeout));
    if (total_timeout.count() > 0)
      curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, as_long_ms(total_timeout));
    if (cfg_.target.is_unix())
      curl_easy_setopt(e, CURLOPT_UNIX_SOCKET_PATH, cfg_.target.socket_path().c_str());
    if (!connect_to_.empty()) {
      if (slot.connect_to.get() == nullptr) slot.connect_to.append(connect_to_);
      curl_easy_setopt(e, CURLOPT_CONNECT_TO, slot.connect_to.get());
    }
    if (cfg_.target.is_https()) configure_tls(e);
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, headers.get());

    if (req.body) {
      curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(req.body->size()));
      curl_easy_setopt(e, CURLOPT_POSTFIELDS, req.body->data());
      if (req.method != Method::post)
        curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, to_string(req.method).data());
    } else if (req.method == Method::get) {
      curl_easy_setopt(e, CURLOPT_HTTPGET, 1L);
    } else if (req.method == Method::del) {
      curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, "DELETE");
    } else {
      // PUT/POST/PATCH without a body still say "Content-Length: 0".
      curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(0));
      curl_easy_setopt(e, CURLOPT_POSTFIELDS, "");
      if (req.method != Method::post)
        curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, to_string(req.method).data());
    }
  }

  void configure_tls(CURL* e) const {
    const TlsOptions& tls = cfg_.tls;
    curl_easy_setopt(e, CURLOPT_SSLVERSION, static_cast<long>(CURL_SSLVERSION_TLSv1_2));
    if (!tls.ca_file.empty()) curl_easy_setopt(e, CURLOPT_CAINFO, tls.ca_file.c_str());
    if (!tls.ca_path.empty()) curl_easy_setopt(e, CURLOPT_CAPATH, tls.ca_path.c_str());
    if (!tls.client_cert.empty()) curl_easy_setopt(e, CURLOPT_SSLCERT, tls.client_cert.c_str());
    if (!tls.client_key.empty()) curl_easy_setopt(e, CURLOPT_SSLKEY, tls.client_key.c_str());
    curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, tls.skip_verify ? 0L : 1L);
    curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, tls.skip_verify ? 0L : 2L);
  }

  std::unique_ptr<Slot> acquire() {
    {
      MutexLock lock(mu_);
      if (!idle_.empty()) {
        auto slot = std::move(idle_.back());
        idle_.pop_back();
        return slot;
      }
    }
    return std::make_unique<Slot>();
  }

  void release(std::unique_ptr<Slot> slot) {
    MutexLock lock(mu_);
    if (idle_.size() < cfg_.max_idle_connections) idle_.push_back(std::move(slot));
  }

  HttpClientConfig cfg_;
  std::shared_ptr<spdlog::logger> log_;
  std::string url_base_;
  std::string connect_to_;
  std::string host_header_;
  mutable Mutex mu_;
  std::vector<std::unique_ptr<Slot>> idle_ GUARDED_BY(mu_);
};

HttpClient::HttpClient(HttpClientConfig config)
    : impl_(std::make_unique<Impl>(std::move(config))) {}
HttpClient::~HttpClient() = default;
HttpClient::HttpClient(HttpClient&&) noexcept = default;
HttpClient& HttpClient::operator=(HttpClient&&) noexcept = default;

HttpResult<Response> HttpClient::send(const Request& request, std::stop_token stop) {
  return impl_->send(request, std::move(stop));
}

HttpResult<StreamResult> HttpClient::stream(const Request& request,
                                            const std::function<bool(std::string_view)>& on_data,
                                            const StreamOptions& options, std::stop_token stop) {
  return impl_->stream(request, on_data, options, std::move(stop));
}

const HttpTarget& HttpClient::target() const {
  return impl_->target();
}
std::size_t HttpClient::idle_connections() const {
  return impl_->idle_connections();
}

}  // namespace cn::http
