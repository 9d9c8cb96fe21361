// Stopping the /metrics and /healthz server must never hang, whatever its listener thread is
// doing: a daemon that fails to start stops it microseconds after starting it.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <future>
#include <thread>

#include "labeler/serve/status_server.h"

namespace cn::labeler {
namespace {

using namespace std::chrono_literals;

StatusServer::Readiness always_ready() {
  return [] { return std::pair<bool, std::string>{true, ""}; };
}

// Expected: stop() right after start() returns every time, including when the listener thread
// has not begun to accept yet. A hang fails the test at its deadline instead of blocking it.
TEST(StatusServer, StopRightAfterStartAlwaysReturns) {
  static Metrics metrics;  // outlives a stop() that never returns
  for (int i = 0; i < 200; ++i) {
    auto server = std::make_shared<StatusServer>(metrics, always_ready());
    ASSERT_TRUE(server->start("127.0.0.1:0"));
    auto stopped = std::make_shared<std::promise<void>>();
    auto done = stopped->get_future();
    std::thread stopper([server, stopped] {
      server->stop();
      stopped->set_value();
    });
    if (done.wait_for(10s) != std::future_status::ready) {
      stopper.detach();  // stuck for good: fail this test rather than hang the run
      FAIL() << "stop() hung on iteration " << i;
    }
    stopper.join();
  }
}

// Expected: a port another process holds fails start() with the system's reason.
TEST(StatusServer, BusyPortFailsWithTheErrnoText) {
  int holder = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(holder, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(holder, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(holder, 1), 0);
  socklen_t len = sizeof addr;
  ASSERT_EQ(::getsockname(holder, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  const std::string address = "127.0.0.1:" + std::to_string(ntohs(addr.sin_port));

  Metrics metrics;
  StatusServer server(metrics, always_ready());
  auto ok = server.start(address);
  ::close(holder);
  ASSERT_FALSE(ok);
  EXPECT_EQ(ok.error().message,
            "metrics address " + address + " is not available (Address already in use)");
}

}  // namespace
}  // namespace cn::labeler
