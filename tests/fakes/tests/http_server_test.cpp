// The fake HTTP server, driven with hand-written bytes over real sockets.
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <future>
#include <nlohmann/json.hpp>

#include "tests/fakes/http/http_server.h"
#include "tests/fakes/http/raw_http_client.h"
#include "tests/fakes/tests/http_test_util.h"

namespace cn::fakes {
namespace {

using namespace std::chrono_literals;
using testing::eventually;
using testing::TempDir;

HttpResponse echo(const HttpRequest& req) {
  nlohmann::json q = nlohmann::json::object();
  for (const auto& [k, v] : req.query) q[k] = v;
  HttpResponse resp;
  resp.body =
      nlohmann::json{
          {"method", req.method}, {"path", req.path}, {"raw_path", req.raw_path},
          {"target", req.target}, {"query", q},       {"host", req.header("host").value_or("")},
          {"body", req.body}}
          .dump();
  return resp;
}

class HttpServerTest : public ::testing::Test {
 protected:
  void serve(HttpServer::Handler handler, HttpServerLimits limits = {}) {
    server_ = HttpServer::unix_socket(sock_, std::move(handler), limits);
    server_->start();
  }
  RawConnection connect() {
    auto conn = RawConnection::open(HttpTarget::unix_socket(sock_), 5s);
    EXPECT_TRUE(conn.has_value()) << conn.error().message;
    return std::move(*conn);
  }

  TempDir dir_;
  std::string sock_ = dir_.file("s.sock");
  std::unique_ptr<HttpServer> server_;
};

TEST_F(HttpServerTest, GetWithBodyPercentDecodingAndAnyHost) {
  serve(echo);
  auto conn = connect();
  ASSERT_TRUE(conn.send(
      "GET /v1/endpoint/cep-name:ns%2Fweb%3Aeth0?label=k8s%3Aapp%3Dx&q=a+b HTTP/1.1\r\n"
      "Host: /var/run/cilium/cilium.sock\r\nContent-Length: 15\r\n\r\n[\"k8s:app=web\"]"));
  auto resp = conn.read_response();
  ASSERT_TRUE(resp) << resp.error().message;
  EXPECT_EQ(resp->status, 200);
  const auto j = nlohmann::json::parse(resp->body);
  EXPECT_EQ(j["method"], "GET");
  EXPECT_EQ(j["path"], "/v1/endpoint/cep-name:ns/web:eth0");
  EXPECT_EQ(j["raw_path"], "/v1/endpoint/cep-name:ns%2Fweb%3Aeth0");
  EXPECT_EQ(j["query"]["label"], "k8s:app=x");
  EXPECT_EQ(j["query"]["q"], "a b");
  EXPECT_EQ(j["host"], "/var/run/cilium/cilium.sock");
  EXPECT_EQ(j["body"], "[\"k8s:app=web\"]");
}

TEST_F(HttpServerTest, ChunkedRequestBodyWithExtensionsAndTrailer) {
  serve(echo);
  auto conn = connect();
  ASSERT_TRUE(
      conn.send("PATCH /v1/endpoint/1/labels HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: "
                "chunked\r\n\r\n"
                "5;ext=1\r\n{\"use\r\n9\r\nr\":[\"a\"]}\r\n0\r\nX-Trailer: yes\r\n\r\n"));
  auto resp = conn.read_response();
  ASSERT_TRUE(resp) << resp.error().message;
  EXPECT_EQ(nlohmann::json::parse(resp->body)["body"], "{\"user\":[\"a\"]}");
}

TEST_F(HttpServerTest, KeepAliveAndPipeliningUseOneConnection) {
  serve(echo);
  auto conn = connect();
  for (int i = 0; i < 3; ++i) {
    auto resp = conn.request("GET", "/n/" + std::to_string(i));
    ASSERT_TRUE(resp) << resp.error().message;
    EXPECT_EQ(nlohmann::json::parse(resp->body)["path"], "/n/" + std::to_string(i));
  }
  // Two requests in one write: both must be answered, in order.
  ASSERT_TRUE(conn.send(format_request("GET", "/a", "") + format_request("GET", "/b", "")));
  auto a = conn.read_response();
  auto b = conn.read_response();
  ASSERT_TRUE(a && b);
  EXPECT_EQ(nlohmann::json::parse(a->body)["path"], "/a");
  EXPECT_EQ(nlohmann::json::parse(b->body)["path"], "/b");
  EXPECT_EQ(server_->accepted_connections(), 1);
}

TEST_F(HttpServerTest, ConnectionCloseIsHonoured) {
  serve(echo);
  auto conn = connect();
  auto resp = conn.request("GET", "/x", "", {{"Connection", "close"}});
  ASSERT_TRUE(resp);
  EXPECT_EQ(resp->header("Connection"), "close");
  EXPECT_TRUE(conn.peer_closed(2s));
}

TEST_F(HttpServerTest, HttpOneZeroClosesByDefault) {
  serve(echo);
  auto conn = connect();
  ASSERT_TRUE(conn.send("GET /x HTTP/1.0\r\n\r\n"));
  auto resp = conn.read_response();
  ASSERT_TRUE(resp);
  EXPECT_EQ(resp->status, 200);
  EXPECT_TRUE(conn.peer_closed(2s));
}

TEST_F(HttpServerTest, GarbageGets400AndClose) {
  serve(echo);
  for (const std::string bytes :
       {"HELLO\r\n\r\n", "GET /a%zz HTTP/1.1\r\n\r\n", "GET /a HTTP/2.0\r\n\r\n",
        "GET noslash HTTP/1.1\r\n\r\n", "GET /a HTTP/1.1\r\nContent-Length: ten\r\n\r\n",
        "GET /a HTTP/1.1\r\nbad header\r\n\r\n",
        "POST /a HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"}) {
    auto conn = connect();
    ASSERT_TRUE(conn.send(bytes));
    auto resp = conn.read_response();
    ASSERT_TRUE(resp) << bytes << ": " << resp.error().message;
    EXPECT_EQ(resp->status, 400) << bytes;
    EXPECT_TRUE(conn.peer_closed(2s)) << bytes;
  }
}

TEST_F(HttpServerTest, RequestSizeIsBounded) {
  serve(echo, HttpServerLimits{.max_header_bytes = 512, .max_body_bytes = 1024});
  {
    auto conn = connect();
    ASSERT_TRUE(conn.send("PUT /a HTTP/1.1\r\nContent-Length: 4096\r\n\r\n"));
    auto resp = conn.read_response();
    ASSERT_TRUE(resp);
    EXPECT_EQ(resp->status, 413);
  }
  {
    auto conn = connect();
    const std::string chunk(700, 'x');
    ASSERT_TRUE(conn.send("PUT /a HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n2bc\r\n" + chunk +
                          "\r\n2bc\r\n" + chunk + "\r\n0\r\n\r\n"));
    auto resp = conn.read_response();
    ASSERT_TRUE(resp);
    EXPECT_EQ(resp->status, 413);
  }
  {
    auto conn = connect();
    ASSERT_TRUE(conn.send("GET /a HTTP/1.1\r\nX-Big: " + std::string(2000, 'y') + "\r\n\r\n"));
    auto resp = conn.read_response();
    ASSERT_TRUE(resp);
    EXPECT_EQ(resp->status, 431);
  }
  auto ok = connect().request("PUT", "/a", std::string(1024, 'z'));
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200);
}

TEST_F(HttpServerTest, ExpectContinueGetsInterimResponseBeforeBody) {
  serve(echo);
  auto conn = connect();
  ASSERT_TRUE(conn.send("PUT /a HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n"));
  // The interim response must arrive before we send the body; a server that waits for the
  // body would time out here.
  char buf[64] = {};
  pollfd p{conn.fd(), POLLIN, 0};
  ASSERT_EQ(::poll(&p, 1, 2000), 1);
  const ssize_t n = ::recv(conn.fd(), buf, sizeof buf - 1, 0);
  ASSERT_GT(n, 0);
  EXPECT_EQ(std::string(buf, static_cast<std::size_t>(n)), "HTTP/1.1 100 Continue\r\n\r\n");
  ASSERT_TRUE(conn.send("{}"));
  auto resp = conn.read_response();
  ASSERT_TRUE(resp);
  EXPECT_EQ(nlohmann::json::parse(resp->body)["body"], "{}");
}

TEST_F(HttpServerTest, ChunkedStreamingResponseKeepsConnectionUsable) {
  serve([](const HttpRequest& req) {
    if (req.path != "/stream") return echo(req);
    HttpResponse resp;
    resp.chunked = true;
    resp.stream = [](StreamWriter& w) {
      for (const char* part : {"{\"a\":1}\n", "{\"b\":2}\n", "{}\n"}) {
        if (!w.write(part)) return;
      }
    };
    return resp;
  });
  auto conn = connect();
  auto resp = conn.request("GET", "/stream");
  ASSERT_TRUE(resp) << resp.error().message;
  EXPECT_EQ(resp->header("Transfer-Encoding"), "chunked");
  EXPECT_FALSE(resp->header("Content-Length"));
  EXPECT_EQ(resp->body, "{\"a\":1}\n{\"b\":2}\n{}\n");
  auto next = conn.request("GET", "/after");
  ASSERT_TRUE(next);
  EXPECT_EQ(nlohmann::json::parse(next->body)["path"], "/after");
}

TEST_F(HttpServerTest, RawStreamRunsUntilClose) {
  serve([](const HttpRequest&) {
    HttpResponse resp;
    resp.stream = [](StreamWriter& w) {
      w.write("line1\n");
      w.write("line2\n");
    };
    return resp;
  });
  auto conn = connect();
  auto resp = conn.request("GET", "/v1/event/stream");
  ASSERT_TRUE(resp) << resp.error().message;
  EXPECT_EQ(resp->header("Connection"), "close");
  EXPECT_FALSE(resp->header("Transfer-Encoding"));
  EXPECT_EQ(resp->body, "line1\nline2\n");
}

TEST_F(HttpServerTest, DropWithoutResponseClosesSilently) {
  serve([](const HttpRequest&) {
    HttpResponse resp;
    resp.drop_without_response = true;
    return resp;
  });
  auto conn = connect();
  auto resp = conn.request("GET", "/x");
  ASSERT_FALSE(resp);
  EXPECT_NE(resp.error().message.find("closed"), std::string::npos) << resp.error().message;
  const auto log = server_->request_log();
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(log[0].status, 0);
}

TEST_F(HttpServerTest, StallNeverAnswersUntilStop) {
  serve([](const HttpRequest&) {
    HttpResponse resp;
    resp.stall = true;
    return resp;
  });
  auto opened = RawConnection::open(HttpTarget::unix_socket(sock_), 200ms);
  ASSERT_TRUE(opened);
  auto resp = opened->request("GET", "/x");
  ASSERT_FALSE(resp);
  EXPECT_NE(resp.error().message.find("timed out"), std::string::npos) << resp.error().message;
  const auto t0 = std::chrono::steady_clock::now();
  server_->stop();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 2s);
  EXPECT_TRUE(opened->peer_closed(2s));
}

TEST_F(HttpServerTest, StopUnblocksStreamingHandlerAndRemovesSocket) {
  std::promise<bool> handler_saw_stop;
  std::atomic<bool> streaming{false};
  serve([&](const HttpRequest&) {
    HttpResponse resp;
    resp.chunked = true;
    resp.stream = [&](StreamWriter& w) {
      w.write("{}\n");
      streaming = true;
      // A heartbeat loop with a long period: stop() must cut the wait short.
      while (!w.wait_stopping(60s)) w.write("{}\n");
      handler_saw_stop.set_value(w.stopping() && !w.write("late"));
    };
    return resp;
  });
  auto conn = connect();
  ASSERT_TRUE(conn.send(format_request("GET", "/v1/event/stream", "")));
  ASSERT_TRUE(eventually([&] { return streaming.load(); }));
  EXPECT_EQ(server_->open_connections(), 1);
  const auto t0 = std::chrono::steady_clock::now();
  server_->stop();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s);
  auto fut = handler_saw_stop.get_future();
  ASSERT_EQ(fut.wait_for(0s), std::future_status::ready);
  EXPECT_TRUE(fut.get());
  EXPECT_EQ(server_->open_connections(), 0);
  struct stat st {};
  EXPECT_NE(::stat(sock_.c_str(), &st), 0) << "socket file must be removed";
  EXPECT_FALSE(RawConnection::open(HttpTarget::unix_socket(sock_), 500ms));
}

TEST_F(HttpServerTest, StreamingHandlerNoticesPeerHangup) {
  std::promise<void> returned;
  std::atomic<bool> streaming{false};
  serve([&](const HttpRequest&) {
    HttpResponse resp;
    resp.chunked = true;
    resp.stream = [&](StreamWriter& w) {
      streaming = true;
      while (!w.wait_stopping(60s)) {
      }
      returned.set_value();
    };
    return resp;
  });
  {
    auto conn = connect();
    ASSERT_TRUE(conn.send(format_request("GET", "/s", "")));
    ASSERT_TRUE(eventually([&] { return streaming.load(); }));
  }  // client hangs up here
  EXPECT_EQ(returned.get_future().wait_for(5s), std::future_status::ready);
}

TEST_F(HttpServerTest, RequestLogRecordsTimestampsAndStatus) {
  serve([](const HttpRequest& req) {
    HttpResponse resp;
    resp.status = req.path == "/missing" ? 404 : 200;
    return resp;
  });
  auto conn = connect();
  ASSERT_TRUE(conn.request("PUT", "/v1/endpoint/cilium-local:0", "{}"));
  ASSERT_TRUE(conn.request("GET", "/missing?x=1"));
  const auto log = server_->request_log();
  ASSERT_EQ(log.size(), 2u);
  EXPECT_EQ(log[0].method, "PUT");
  EXPECT_EQ(log[0].target, "/v1/endpoint/cilium-local:0");
  EXPECT_EQ(log[0].status, 200);
  EXPECT_LE(log[0].received, log[0].answered);
  EXPECT_LE(log[0].answered, log[1].received);
  EXPECT_EQ(log[1].status, 404);
  EXPECT_EQ(log[1].path, "/missing");
  server_->clear_request_log();
  EXPECT_TRUE(server_->request_log().empty());
}

TEST_F(HttpServerTest, HandlerExceptionBecomes500) {
  serve([](const HttpRequest&) -> HttpResponse { throw std::runtime_error("boom"); });
  auto resp = connect().request("GET", "/x");
  ASSERT_TRUE(resp);
  EXPECT_EQ(resp->status, 500);
  EXPECT_NE(resp->body.find("boom"), std::string::npos);
}

TEST_F(HttpServerTest, ResponseHeadersAndReasonPhrase) {
  serve([](const HttpRequest&) {
    HttpResponse resp;
    resp.status = 429;
    resp.headers.emplace_back("X-Nomad-Index", "42");
    resp.headers.emplace_back("Content-Length", "999");  // framing belongs to the server
    resp.body = "\"slow down\"";
    return resp;
  });
  auto resp = connect().request("GET", "/x");
  ASSERT_TRUE(resp);
  EXPECT_EQ(resp->status, 429);
  EXPECT_EQ(resp->reason, "Too Many Requests");
  EXPECT_EQ(resp->header("x-nomad-index"), "42");
  EXPECT_EQ(resp->header("Content-Length"), "11");
  EXPECT_EQ(resp->header("Content-Type"), "application/json");
}

TEST_F(HttpServerTest, StaleSocketFileIsReplaced) {
  {
    const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, sock_.c_str(), sizeof addr.sun_path - 1);
    ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    ::close(fd);  // leaves the file behind, as a crashed agent would
  }
  serve(echo);
  auto resp = connect().request("GET", "/x");
  ASSERT_TRUE(resp);
  EXPECT_EQ(resp->status, 200);
}

// httplib alone would answer 400 past its 8 KiB line limit; Go answers 431.
TEST_F(HttpServerTest, LongHeaderLineGets431) {
  serve(echo);
  auto conn = connect();
  ASSERT_TRUE(conn.send("GET /a HTTP/1.1\r\nX-Big: " + std::string(9000, 'y') + "\r\n\r\n"));
  auto resp = conn.read_response();
  ASSERT_TRUE(resp) << resp.error().message;
  EXPECT_EQ(resp->status, 431);
  EXPECT_TRUE(conn.peer_closed(2s));
  const auto log = server_->request_log();
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(log[0].status, 431);
  EXPECT_EQ(log[0].target, "/a");
}

// Keep-alive as Go serves it: no request cap per connection (httplib's default closes after 5).
TEST_F(HttpServerTest, KeepAliveHasNoRequestCap) {
  serve(echo);
  auto conn = connect();
  for (int i = 0; i < 8; ++i) ASSERT_TRUE(conn.request("GET", "/k")) << i;
  EXPECT_EQ(server_->accepted_connections(), 1);
}

// The Go servers behind the fakes neither compress nor serve ranges, and send no Keep-Alive
// header; httplib would do all three.
TEST_F(HttpServerTest, NoCompressionRangesOrKeepAliveHeader) {
  serve([](const HttpRequest&) {
    HttpResponse r;
    r.body = "{\"items\":[" + std::string(2000, ' ') + "]}";
    return r;
  });
  auto resp = connect().request("GET", "/big", "",
                                {{"Accept-Encoding", "gzip, br"}, {"Range", "bytes=0-3"}});
  ASSERT_TRUE(resp) << resp.error().message;
  EXPECT_EQ(resp->status, 200);
  EXPECT_FALSE(resp->header("Content-Encoding"));
  EXPECT_FALSE(resp->header("Keep-Alive"));
  EXPECT_EQ(resp->body.size(), 2012u);
}

TEST_F(HttpServerTest, HandlerSeesItsClientLeave) {
  std::promise<bool> saw;
  std::atomic<bool> handling{false};
  serve([&](const HttpRequest& req) {
    const bool left_at_first = req.client_gone();
    handling = true;
    saw.set_value(!left_at_first && eventually([&] { return req.client_gone(); }));
    return HttpResponse{};
  });
  {
    auto conn = connect();
    ASSERT_TRUE(conn.send(format_request("PATCH", "/v1/endpoint/1/labels", "{}")));
    ASSERT_TRUE(eventually([&] { return handling.load(); }));
  }  // the client gives up
  auto fut = saw.get_future();
  ASSERT_EQ(fut.wait_for(10s), std::future_status::ready);
  EXPECT_TRUE(fut.get());
}

// httplib's own stop() is lost when it comes before its listen loop has started.
TEST_F(HttpServerTest, StopRightAfterStartReturns) {
  for (int i = 0; i < 20; ++i) {
    auto server = HttpServer::unix_socket(sock_, echo);
    server->start();
    auto stopped = std::async(std::launch::async, [&server] { server->stop(); });
    ASSERT_EQ(stopped.wait_for(5s), std::future_status::ready) << i;
  }
}

TEST(HttpServerTcp, LoopbackWithEphemeralPort) {
  auto server = HttpServer::tcp("127.0.0.1", 0, echo);
  server->start();
  ASSERT_GT(server->port(), 0);
  auto resp = http_request(HttpTarget::tcp("127.0.0.1", server->port()), "GET", "/v1/agent/self");
  ASSERT_TRUE(resp) << resp.error().message;
  EXPECT_EQ(nlohmann::json::parse(resp->body)["path"], "/v1/agent/self");
  server->stop();
  EXPECT_FALSE(http_request(HttpTarget::tcp("127.0.0.1", server->port()), "GET", "/"));
}

// httplib's default socket options include SO_REUSEPORT, which would let this bind succeed.
TEST(HttpServerTcp, SecondServerCannotBindABusyPort) {
  auto first = HttpServer::tcp("127.0.0.1", 0, echo);
  EXPECT_THROW(HttpServer::tcp("127.0.0.1", first->port(), echo), std::system_error);
}

TEST(HttpServerTcp, ManyConcurrentClients) {
  auto server = HttpServer::tcp("127.0.0.1", 0, echo);
  server->start();
  std::vector<std::future<int>> results;
  for (int i = 0; i < 16; ++i) {
    results.push_back(std::async(std::launch::async, [&server, i] {
      int ok = 0;
      auto conn = RawConnection::open(HttpTarget::tcp("127.0.0.1", server->port()));
      if (!conn) return 0;
      for (int k = 0; k < 10; ++k) {
        auto r = conn->request("GET", "/c/" + std::to_string(i) + "/" + std::to_string(k));
        if (r && r->status == 200) ++ok;
      }
      return ok;
    }));
  }
  int total = 0;
  for (auto& f : results) total += f.get();
  EXPECT_EQ(total, 160);
  EXPECT_EQ(server->accepted_connections(), 16);
}

}  // namespace
}  // namespace cn::fakes
