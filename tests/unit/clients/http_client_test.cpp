// cn::http::HttpClient against the fake HTTP server: unix sockets and loopback TCP, headers,
// bodies, keep-alive, concurrency, proxies, timeouts and both streaming transports.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

#include "common/http/error_text.h"
#include "common/http/http_client.h"
#include "common/http/url.h"
#include "tests/fakes/http/http_server.h"
#include "tests/support/recorder.h"
#include "tests/unit/clients/client_test_util.h"

namespace cn::http {
namespace {

using namespace std::chrono_literals;
using client_testing::eventually;
using client_testing::TempDir;
using fakes::HttpRequest;
using fakes::HttpResponse;
using fakes::HttpServer;
using fakes::StreamWriter;

using Recorder = ::cn::testing::Recorder<HttpRequest>;

class HttpClientTest : public ::testing::Test {
 protected:
  void serve_unix(HttpServer::Handler handler) {
    server_ = HttpServer::unix_socket(dir_.file("api.sock"), std::move(handler));
    server_->start();
  }
  HttpClient unix_client(HttpClientConfig cfg = {}) {
    cfg.target = HttpTarget::unix_socket(dir_.file("api.sock"));
    return HttpClient(std::move(cfg));
  }
  void TearDown() override {
    if (server_) server_->stop();
  }

  TempDir dir_;
  std::unique_ptr<HttpServer> server_;
};

TEST_F(HttpClientTest, UnixSocketRequestCarriesHostLocalhostMethodAndBody) {
  Recorder rec;
  serve_unix([&](const HttpRequest& r) {
    rec.add(r);
    HttpResponse resp;
    resp.headers = {{"X-Nomad-Index", "42"}};
    resp.body = "ok";
    return resp;
  });
  HttpClient client = unix_client();
  Request req{Method::patch, "/v1/endpoint/1/labels", {}, std::string(R"({"user":[]})"), 0ms};
  auto res = client.send(req);
  ASSERT_TRUE(res) << res.error().message;
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->body, "ok");
  EXPECT_EQ(res->headers.get("x-nomad-index").value_or(""), "42");  // case-insensitive
  auto seen = rec.items();
  ASSERT_EQ(seen.size(), 1U);
  EXPECT_EQ(seen[0].method, "PATCH");
  EXPECT_EQ(seen[0].target, "/v1/endpoint/1/labels");
  EXPECT_EQ(seen[0].header("Host").value_or(""), "localhost");
  EXPECT_EQ(seen[0].header("Content-Type").value_or(""), "application/json");
  EXPECT_FALSE(seen[0].header("Expect").has_value());
  EXPECT_EQ(seen[0].body, R"({"user":[]})");
}

TEST_F(HttpClientTest, GetCanCarryABodyAndDeleteHasNone) {
  Recorder rec;
  serve_unix([&](const HttpRequest& r) {
    rec.add(r);
    return HttpResponse{};
  });
  HttpClient client = unix_client();
  ASSERT_TRUE(
      client.send(Request{Method::get, "/v1/endpoint", {}, std::string(R"(["k8s:app=x"])"), 0ms}));
  ASSERT_TRUE(client.send(Request{Method::del, "/v1/endpoint/7", {}, std::nullopt, 0ms}));
  auto seen = rec.items();
  ASSERT_EQ(seen.size(), 2U);
  EXPECT_EQ(seen[0].method, "GET");
  EXPECT_EQ(seen[0].body, R"(["k8s:app=x"])");
  EXPECT_EQ(seen[1].method, "DELETE");
  EXPECT_EQ(seen[1].body, "");
}

TEST_F(HttpClientTest, DefaultHeadersAreSentAndARequestHeaderOverridesThem) {
  Recorder rec;
  serve_unix([&](const HttpRequest& r) {
    rec.add(r);
    return HttpResponse{};
  });
  HttpClientConfig cfg;
  cfg.default_headers.add("X-Nomad-Token", "default-secret");
  cfg.default_headers.add("X-Other", "kept");
  HttpClient client = unix_client(cfg);
  ASSERT_TRUE(client.send(Request{Method::get, "/a", {}, std::nullopt, 0ms}));
  Request over{Method::get, "/b", {}, std::nullopt, 0ms};
  over.headers.add("x-nomad-token", "per-call");
  ASSERT_TRUE(client.send(over));
  auto seen = rec.items();
  ASSERT_EQ(seen.size(), 2U);
  EXPECT_EQ(seen[0].header("X-Nomad-Token").value_or(""), "default-secret");
  EXPECT_EQ(seen[1].header("X-Nomad-Token").value_or(""), "per-call");
  EXPECT_EQ(seen[1].header("X-Other").value_or(""), "kept");
}

TEST_F(HttpClientTest, HeaderInjectionIsRefused) {
  serve_unix([](const HttpRequest&) { return HttpResponse{}; });
  HttpClient client = unix_client();
  Request req{Method::get, "/a", {}, std::nullopt, 0ms};
  req.headers.add("X-Evil", "a\r\nX-Injected: 1");
  auto res = client.send(req);
  ASSERT_FALSE(res);
  EXPECT_EQ(res.error().kind, ErrorKind::invalid);
  auto bad_target = client.send(Request{Method::get, "no-slash", {}, std::nullopt, 0ms});
  ASSERT_FALSE(bad_target);
  EXPECT_EQ(server_->request_log().size(), 0U);
}

TEST_F(HttpClientTest, ReusesOneConnectionForSequentialRequests) {
  serve_unix([](const HttpRequest&) { return HttpResponse{}; });
  HttpClient client = unix_client();
  for (int i = 0; i < 5; ++i)
    ASSERT_TRUE(client.send(Request{Method::get, "/x", {}, std::nullopt, 0ms}));
  EXPECT_EQ(server_->accepted_connections(), 1);
  EXPECT_EQ(client.idle_connections(), 1U);
}

TEST_F(HttpClientTest, ConcurrentCallersGetTheirOwnAnswers) {
  serve_unix([](const HttpRequest& r) {
    HttpResponse resp;
    resp.body = r.path;  // echo: a mixed-up connection would hand back someone else's answer
    return resp;
  });
  HttpClient client = unix_client();
  std::atomic<int> good{0};
  std::vector<std::jthread> threads;
  for (int t = 0; t < 6; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 15; ++i) {
        const std::string path = "/t" + std::to_string(t) + "/" + std::to_string(i);
        auto res = client.send(Request{Method::get, path, {}, std::nullopt, 0ms});
        if (res && res->status == 200 && res->body == path) ++good;
      }
    });
  }
  threads.clear();
  EXPECT_EQ(good.load(), 90);
  EXPECT_LE(server_->accepted_connections(), 6 + 4);  // pooled, not one per request
}

TEST_F(HttpClientTest, MissingSocketIsAConnectFailureNamingThePath) {
  HttpClient client = unix_client();
  auto res = client.send(Request{Method::get, "/v1/config", {}, std::nullopt, 0ms});
  ASSERT_FALSE(res);
  EXPECT_EQ(res.error().kind, ErrorKind::transport);
  EXPECT_NE(res.error().message.find(dir_.file("api.sock")), std::string::npos)
      << res.error().message;
  EXPECT_NE(res.error().message.find("GET /v1/config"), std::string::npos) << res.error().message;
}

TEST_F(HttpClientTest, StalledServerHitsTheTotalTimeout) {
  serve_unix([](const HttpRequest&) {
    HttpResponse r;
    r.stall = true;
    return r;
  });
  HttpClient client = unix_client();
  const auto start = std::chrono::steady_clock::now();
  auto res = client.send(Request{Method::get, "/slow", {}, std::nullopt, 200ms});
  ASSERT_FALSE(res);
  EXPECT_EQ(res.error().kind, ErrorKind::timeout);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
}

TEST_F(HttpClientTest, StopTokenAbortsAPendingRequest) {
  serve_unix([](const HttpRequest&) {
    HttpResponse r;
    r.stall = true;
    return r;
  });
  HttpClient client = unix_client();
  std::stop_source stop;
  std::jthread stopper([&] {
    eventually([&] { return server_->open_connections() > 0 && !server_->request_log().empty(); });
    stop.request_stop();
  });
  auto res = client.send(Request{Method::get, "/hang", {}, std::nullopt, 30s}, stop.get_token());
  ASSERT_FALSE(res);
  EXPECT_EQ(res.error().kind, ErrorKind::cancelled);
}

TEST_F(HttpClientTest, OversizedBodyIsRefused) {
  serve_unix([](const HttpRequest&) {
    HttpResponse r;
    r.body = std::string(10'000, 'x');
    return r;
  });
  HttpClientConfig cfg;
  cfg.max_body_bytes = 1'000;
  HttpClient client = unix_client(cfg);
  auto res = client.send(Request{Method::get, "/big", {}, std::nullopt, 0ms});
  ASSERT_FALSE(res);
  EXPECT_EQ(res.error().kind, ErrorKind::bad_answer);
}

// A node-wide http_proxy must not capture calls to the local agents.
TEST_F(HttpClientTest, ProxyEnvironmentIsIgnored) {
  std::atomic<int> proxied{0};
  auto proxy = HttpServer::tcp("127.0.0.1", 0, [&](const HttpRequest&) {
    ++proxied;
    HttpResponse r;
    r.status = 502;
    return r;
  });
  proxy->start();
  auto direct = HttpServer::tcp("127.0.0.1", 0, [](const HttpRequest&) {
    HttpResponse r;
    r.body = "direct";
    return r;
  });
  direct->start();
  const std::string proxy_url = "http://127.0.0.1:" + std::to_string(proxy->port());
  for (const char* var : {"http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"})
    ::setenv(var, proxy_url.c_str(), 1);
  ::unsetenv("no_proxy");
  ::unsetenv("NO_PROXY");
  HttpClientConfig cfg;
  cfg.target = *HttpTarget::url("http://127.0.0.1:" + std::to_string(direct->port()));
  HttpClient client(cfg);
  auto res = client.send(Request{Method::get, "/v1/agent/self", {}, std::nullopt, 0ms});
  for (const char* var : {"http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"}) ::unsetenv(var);
  ASSERT_TRUE(res) << res.error().message;
  EXPECT_EQ(res->body, "direct");
  EXPECT_EQ(proxied.load(), 0);
  proxy->stop();
  direct->stop();
}

// ---- streaming -------------------------------------------------------------------------------

struct Collected {
  std::mutex mu;
  std::string bytes;
  void add(std::string_view b) {
    std::lock_guard lock(mu);
    bytes.append(b);
  }
  std::string get() {
    std::lock_guard lock(mu);
    return bytes;
  }
};

class HttpStreamTest : public HttpClientTest, public ::testing::WithParamInterface<bool> {};

TEST_P(HttpStreamTest, DeliversEveryByteThenReportsEof) {
  const bool chunked = GetParam();
  serve_unix([chunked](const HttpRequest&) {
    HttpResponse r;
    r.chunked = chunked;
    r.close_connection = !chunked;
    r.stream = [](StreamWriter& w) {
      w.write("{}\n{\"Ind");
      w.write("ex\":5}\n");
      w.write("{}\n");
    };
    return r;
  });
  HttpClient client = unix_client();
  Collected got;
  auto res = client.stream(Request{Method::get, "/v1/event/stream", {}, std::nullopt, 0ms},
                           [&](std::string_view b) {
                             got.add(b);
                             return true;
                           },
                           StreamOptions{}, {});
  ASSERT_TRUE(res) << res.error().message;
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->end, StreamEnd::eof);
  EXPECT_EQ(got.get(), "{}\n{\"Index\":5}\n{}\n");
}

TEST_P(HttpStreamTest, CallbackReturningFalseEndsTheStream) {
  const bool chunked = GetParam();
  serve_unix([chunked](const HttpRequest&) {
    HttpResponse r;
    r.chunked = chunked;
    r.close_connection = !chunked;
    r.stream = [](StreamWriter& w) {
      while (w.write("{}\n")) {
        if (w.wait_stopping(5ms)) return;
      }
    };
    return r;
  });
  HttpClient client = unix_client();
  int calls = 0;
  auto res = client.stream(Request{Method::get, "/s", {}, std::nullopt, 0ms},
                           [&](std::string_view) { return ++calls < 3; }, StreamOptions{}, {});
  ASSERT_TRUE(res) << res.error().message;
  EXPECT_EQ(res->end, StreamEnd::callback);
  EXPECT_EQ(calls, 3);
}

TEST_P(HttpStreamTest, IdleTimeoutFailsAStreamThatGoesQuiet) {
  const bool chunked = GetParam();
  serve_unix([chunked](const HttpRequest&) {
    HttpResponse r;
    r.chunked = chunked;
    r.close_connection = !chunked;
    r.stream = [](StreamWriter& w) {
      w.write("{}\n");
      w.wait_stopping(30s);  // then silence, connection open
    };
    return r;
  });
  HttpClient client = unix_client();
  Collected got;
  const auto start = std::chrono::steady_clock::now();
  auto res = client.stream(Request{Method::get, "/s", {}, std::nullopt, 0ms},
                           [&](std::string_view b) {
                             got.add(b);
                             return true;
                           },
                           StreamOptions{250ms, 4096}, {});
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(res);
  EXPECT_EQ(res.error().kind, ErrorKind::timeout);
  EXPECT_EQ(got.get(), "{}\n");
  EXPECT_GE(took, 250ms);
  EXPECT_LT(took, 10s);
}

TEST_P(HttpStreamTest, StopTokenEndsTheStreamCleanly) {
  const bool chunked = GetParam();
  serve_unix([chunked](const HttpRequest&) {
    HttpResponse r;
    r.chunked = chunked;
    r.close_connection = !chunked;
    r.stream = [](StreamWriter& w) {
      w.write("{}\n");
      w.wait_stopping(30s);
    };
    return r;
  });
  HttpClient client = unix_client();
  std::stop_source stop;
  auto res = client.stream(
      Request{Method::get, "/s", {}, std::nullopt, 0ms},
      [&](std::string_view) {
        // Requested from another thread, as the labeler's shutdown does.
        std::jthread([&] { stop.request_stop(); }).join();
        return true;
      },
      StreamOptions{}, stop.get_token());
  ASSERT_TRUE(res) << res.error().message;
  EXPECT_EQ(res->end, StreamEnd::stopped);
  EXPECT_TRUE(eventually([&] { return server_->open_connections() == 0; }));
}

INSTANTIATE_TEST_SUITE_P(Transports, HttpStreamTest, ::testing::Values(true, false),
                         [](const ::testing::TestParamInfo<bool>& p) {
                           return p.param ? "chunked" : "raw_until_close";
                         });

TEST_F(HttpClientTest, StreamErrorStatusKeepsTheBodyForTheMessage) {
  serve_unix([](const HttpRequest&) {
    HttpResponse r;
    r.status = 403;
    r.body = "Permission denied";
    return r;
  });
  HttpClient client = unix_client();
  bool called = false;
  auto res = client.stream(Request{Method::get, "/s", {}, std::nullopt, 0ms},
                           [&](std::string_view) { return called = true; }, StreamOptions{}, {});
  ASSERT_TRUE(res) << res.error().message;
  EXPECT_EQ(res->status, 403);
  EXPECT_EQ(res->error_body, "Permission denied");
  EXPECT_FALSE(called);
}

// ---- small pieces ----------------------------------------------------------------------------

TEST(HttpTarget, ParsesUrls) {
  auto a = HttpTarget::url("http://127.0.0.1:4646");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->host(), "127.0.0.1");
  EXPECT_EQ(a->port(), 4646);
  EXPECT_FALSE(a->is_https());
  auto b = HttpTarget::url("https://nomad.example.com/prefix/");
  ASSERT_TRUE(b);
  EXPECT_TRUE(b->is_https());
  EXPECT_EQ(b->port(), 443);
  EXPECT_EQ(b->path_prefix(), "/prefix");
  auto c = HttpTarget::url("http://[::1]:4646");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->host(), "::1");
  EXPECT_EQ(c->describe(), "http://[::1]:4646");
  for (const char* bad : {"127.0.0.1:4646", "ftp://x", "http://", "http://h:0", "http://h:99999",
                          "http://u:p@h", "http://h/?q=1", "http://h /x"}) {
    EXPECT_FALSE(HttpTarget::url(bad)) << bad;
  }
  EXPECT_EQ(HttpTarget::unix_socket("/run/x.sock").describe(), "unix:/run/x.sock");
}

TEST(HttpText, PercentEncodeAndTargets) {
  EXPECT_EQ(percent_encode("batch/periodic-1 x*"), "batch%2Fperiodic-1%20x%2A");
  EXPECT_EQ(Target("/v1/event/stream").query("topic", "Allocation").query("namespace", "*").str(),
            "/v1/event/stream?topic=Allocation&namespace=%2A");
}

TEST(HttpText, BodyExcerptTrimsFlattensAndCuts) {
  EXPECT_EQ(body_excerpt("  alloc not found\n"), "alloc not found");
  EXPECT_EQ(body_excerpt("a\nb"), "a b");
  EXPECT_EQ(body_excerpt(std::string(300, 'x')), std::string(200, 'x') + "...");
  // "é" is 2 bytes: a cut in its middle backs up to before it.
  EXPECT_EQ(body_excerpt("abc\xC3\xA9", 4), "abc...");
  EXPECT_EQ(redact("token=abc and abc", "abc"), "token=<redacted> and <redacted>");
  EXPECT_EQ(redact("nothing", ""), "nothing");
}

}  // namespace
}  // namespace cn::http
