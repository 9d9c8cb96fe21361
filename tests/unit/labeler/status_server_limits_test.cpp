// The status port faces whatever can reach it: slow clients, floods and a second labeler must
// not take /healthz away from the liveness probe, nor memory from the node.
#include <gtest/gtest.h>

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "labeler/serve/status_server.h"
#include "tests/fakes/http/raw_http_client.h"
#include "tests/support/eventually.h"
#include "tests/support/peak_rss.h"

namespace cn::labeler {
namespace {

using namespace std::chrono_literals;
using fakes::RawConnection;

// Generous: CI runs these under ASan on a loaded machine. The latency itself is measured by
// cn-status-server-bench.
constexpr auto kAnswerDeadline = 5s;

StatusServer::Readiness ready() {
  return [] { return std::pair<bool, std::string>{true, ""}; };
}

fakes::HttpTarget target(int port) {
  return fakes::HttpTarget::tcp("127.0.0.1", port);
}

// Opens `n` connections that each send half a request line and then nothing.
::testing::AssertionResult open_slow(int port, int n, std::vector<RawConnection>& out) {
  for (int i = 0; i < n; ++i) {
    auto conn = RawConnection::open(target(port));
    if (!conn)
      return ::testing::AssertionFailure() << "connect " << i << ": " << conn.error().message;
    if (!conn->send("GET /heal")) return ::testing::AssertionFailure() << "send " << i;
    out.push_back(std::move(*conn));
  }
  return ::testing::AssertionSuccess();
}

// Everything the server sends until it closes (or resets) the connection; `closed` is false
// when the deadline came first.
std::string read_to_close(RawConnection& conn, bool* closed = nullptr) {
  const auto deadline = std::chrono::steady_clock::now() + kAnswerDeadline;
  std::string answer;
  char buf[4096];
  if (closed) *closed = false;
  for (;;) {
    auto left =
        std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    pollfd p{conn.fd(), POLLIN, 0};
    if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) != 1) return answer;
    ssize_t n = ::recv(conn.fd(), buf, sizeof buf, 0);
    if (n <= 0) {
      if (closed) *closed = true;
      return answer;
    }
    answer.append(buf, static_cast<std::size_t>(n));
  }
}

// The whole answer to `request` on a fresh connection, as sent.
std::string http_exchange(int port, std::string_view request) {
  auto conn = RawConnection::open(target(port), kAnswerDeadline);
  if (!conn || !conn->send(request)) return {};
  return read_to_close(*conn);
}

class StatusServerLimitsTest : public ::testing::Test {
 protected:
  void start(StatusServerLimits limits = {}) {
    server_ = std::make_unique<StatusServer>(metrics_, ready(), limits);
    ASSERT_TRUE(server_->start("127.0.0.1:0"));
    port_ = server_->port();
  }
  void TearDown() override {
    if (server_) server_->stop();
  }

  Metrics metrics_;
  std::unique_ptr<StatusServer> server_;
  int port_ = 0;
};

constexpr char kHealthz[] = "GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n";

// Expected: 200 clients that hold half a request line open do not delay /healthz, and none of
// them is closed to make room (the head timeout is far away).
TEST_F(StatusServerLimitsTest, HealthzAnswersWhile200SlowClientsHoldTheirConnections) {
  start();
  std::vector<RawConnection> slow;
  ASSERT_TRUE(open_slow(port_, 200, slow));
  const std::string answer = http_exchange(port_, kHealthz);
  EXPECT_TRUE(answer.starts_with("HTTP/1.1 200 OK\r\n")) << answer;
  EXPECT_TRUE(answer.ends_with("\r\n\r\nok\n")) << answer;
  for (std::size_t i = 0; i < slow.size(); ++i)
    EXPECT_FALSE(slow[i].peer_closed(0ms)) << "slow connection " << i << " was closed";
}

// Expected: past the connection cap the oldest clients still sending their head are closed, the
// newest stay, and a fresh probe gets its answer.
TEST_F(StatusServerLimitsTest, PastTheCapTheOldestSlowClientsAreClosed) {
  start();
  const int n = 300;
  const int evicted = n - static_cast<int>(StatusServerLimits{}.max_connections);
  std::vector<RawConnection> slow;
  ASSERT_TRUE(open_slow(port_, n, slow));
  ASSERT_TRUE(testing::eventually(
      [&] {
        for (int i = 0; i < evicted; ++i)
          if (!slow[i].peer_closed(0ms)) return false;
        return true;
      },
      10s))
      << "the " << evicted << " oldest slow connections were not all closed";
  const std::string answer = http_exchange(port_, kHealthz);
  EXPECT_TRUE(answer.starts_with("HTTP/1.1 200 OK\r\n")) << answer;
  // The probe took the slot of one more old client; the newest 200 are untouched.
  for (int i = n - 200; i < n; ++i)
    EXPECT_FALSE(slow[i].peer_closed(0ms)) << "slow connection " << i << " was closed";
}

// Expected: a POST announcing 300 MB is refused with 405 as soon as its head is in; the body is
// never read into memory (the process's peak RSS grows by less than 4 MiB while it streams), and
// the connection is closed.
TEST_F(StatusServerLimitsTest, BodyFloodIsRefusedWithoutGrowingMemory) {
  start();
  constexpr std::size_t kBody = std::size_t{300} << 20;
  const std::string chunk(std::size_t{64} << 10, 'x');
  std::size_t sent = 0;
  bool closed = false;
  std::string answer;
  const auto flood = testing::measure_peak_rss_growth([&] {
    auto conn = RawConnection::open(target(port_));
    ASSERT_TRUE(conn);
    ASSERT_TRUE(conn->send("POST /metrics HTTP/1.1\r\nHost: localhost\r\nContent-Length: " +
                           std::to_string(kBody) + "\r\n\r\n"));
    // The body streams until the server answers or stops taking it.
    while (sent < kBody && !conn->peer_closed(0ms)) {
      if (!conn->send(chunk)) break;
      sent += chunk.size();
    }
    answer = read_to_close(*conn, &closed);
  });
  EXPECT_TRUE(answer.starts_with("HTTP/1.1 405 Method Not Allowed\r\n")) << answer;
  EXPECT_NE(answer.find("\r\nAllow: GET, HEAD\r\n"), std::string::npos) << answer;
  EXPECT_TRUE(closed);
  EXPECT_LT(sent, kBody) << "the server took the whole body";
  EXPECT_LT(flood.peak_growth_kb, 4 * 1024) << "body bytes sent: " << sent;
}

// Expected: a head over the limit gets 431 and the connection is closed.
TEST_F(StatusServerLimitsTest, OversizedHeadIs431) {
  start();
  const std::string answer = http_exchange(
      port_, "GET /healthz HTTP/1.1\r\nX-Fill: " + std::string(9000, 'a') + "\r\n\r\n");
  EXPECT_TRUE(answer.starts_with("HTTP/1.1 431 Request Header Fields Too Large\r\n")) << answer;
}

// Expected: a second server on a port the first one listens on fails with the system's reason,
// so a second labeler cannot share the probes with the first.
TEST_F(StatusServerLimitsTest, SecondServerOnTheSamePortFailsToStart) {
  start();
  Metrics other_metrics;
  StatusServer second(other_metrics, ready());
  const std::string address = "127.0.0.1:" + std::to_string(port_);
  auto ok = second.start(address);
  ASSERT_FALSE(ok);
  EXPECT_EQ(ok.error().message,
            "metrics address " + address + " is not available (Address already in use)");
}

// Expected: HEAD answers the GET's headers and no body.
TEST_F(StatusServerLimitsTest, HeadHealthzHasNoBody) {
  start();
  const std::string answer = http_exchange(port_, "HEAD /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_TRUE(answer.starts_with("HTTP/1.1 200 OK\r\n")) << answer;
  EXPECT_NE(answer.find("\r\nContent-Length: 3\r\n"), std::string::npos) << answer;
  EXPECT_TRUE(answer.ends_with("\r\n\r\n")) << answer;
}

// Expected: an unknown path is 404; a query string does not hide a known one.
TEST_F(StatusServerLimitsTest, UnknownPathIs404) {
  start();
  EXPECT_TRUE(http_exchange(port_, "GET /debug HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 404 "));
  EXPECT_TRUE(
      http_exchange(port_, "GET /healthz?x=1 HTTP/1.0\r\n\r\n").starts_with("HTTP/1.1 200 "));
}

// Expected: a GET that announces a body is refused instead of read; so is a chunked one.
TEST_F(StatusServerLimitsTest, GetWithABodyIsRefused) {
  start();
  EXPECT_TRUE(http_exchange(port_, "GET /healthz HTTP/1.1\r\nContent-Length: 10\r\n\r\n")
                  .starts_with("HTTP/1.1 413 "));
  EXPECT_TRUE(http_exchange(port_, "GET /healthz HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n")
                  .starts_with("HTTP/1.1 400 "));
  EXPECT_TRUE(http_exchange(port_, "GET /healthz HTTP/1.1\r\nContent-Length: 0\r\n\r\n")
                  .starts_with("HTTP/1.1 200 "));
  const std::string head =
      http_exchange(port_, "HEAD /healthz HTTP/1.1\r\nContent-Length: 5\r\n\r\n");
  EXPECT_TRUE(head.starts_with("HTTP/1.1 413 ")) << head;
  EXPECT_TRUE(head.ends_with("\r\n\r\n")) << "a HEAD answer has no body: " << head;
}

// Expected: a client that does not finish its head in time is closed without an answer.
TEST_F(StatusServerLimitsTest, SlowHeadIsClosedAtTheHeadTimeout) {
  StatusServerLimits limits;
  limits.head_timeout = 200ms;
  start(limits);
  auto conn = RawConnection::open(target(port_));
  ASSERT_TRUE(conn);
  ASSERT_TRUE(conn->send("GET /healthz HTTP/1.1\r\n"));
  bool closed = false;
  EXPECT_EQ(read_to_close(*conn, &closed), "");
  EXPECT_TRUE(closed);
}

// Expected: /metrics sets the ready gauge from the same readiness /healthz reports, and a server
// not ready says why on /healthz with 503, detail lines after.
TEST_F(StatusServerLimitsTest, MetricsAndHealthzFollowReadiness) {
  StatusServer server(metrics_, [] { return std::pair<bool, std::string>{false, "no agent"}; });
  server.set_detail([] { return std::string("leader: node-1\n"); });
  ASSERT_TRUE(server.start("127.0.0.1:0"));
  const std::string health = http_exchange(server.port(), kHealthz);
  EXPECT_TRUE(health.starts_with("HTTP/1.1 503 Service Unavailable\r\n")) << health;
  EXPECT_TRUE(health.ends_with("\r\n\r\nnot ready: no agent\nleader: node-1\n")) << health;
  const std::string scrape = http_exchange(server.port(), "GET /metrics HTTP/1.1\r\n\r\n");
  EXPECT_TRUE(scrape.starts_with("HTTP/1.1 200 OK\r\n")) << scrape;
  EXPECT_NE(scrape.find("\ncilium_nomad_ready 0\n"), std::string::npos) << scrape;
  server.stop();
}

// Expected: a port that is not a number in range is refused before anything is bound.
TEST(StatusServerAddress, BadPortIsRefused) {
  Metrics metrics;
  for (const std::string address :
       {"127.0.0.1:80x", "127.0.0.1:65536", "127.0.0.1:-1", "127.0.0.1:"}) {
    StatusServer server(metrics, ready());
    auto ok = server.start(address);
    ASSERT_FALSE(ok) << address;
    EXPECT_EQ(ok.error().message, "--metrics-addr has no valid port: " + address);
  }
}

// Expected: an IPv6 loopback address in brackets is served (skipped without IPv6).
TEST(StatusServerAddress, Ipv6LoopbackIsServed) {
  int probe = ::socket(AF_INET6, SOCK_STREAM, 0);
  if (probe < 0) GTEST_SKIP() << "no IPv6";
  ::close(probe);
  Metrics metrics;
  StatusServer server(metrics, ready());
  auto ok = server.start("[::1]:0");
  if (!ok) GTEST_SKIP() << ok.error().message;
  EXPECT_GT(server.port(), 0);
  server.stop();
}

}  // namespace
}  // namespace cn::labeler
