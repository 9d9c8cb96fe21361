// /healthz and the cilium_nomad_ready gauge over HTTP, following the health tracker on a manual
// clock: both turn not ready when a dependency has been unreachable past the window, and ready
// again when it answers.
#include <gtest/gtest.h>

#include "labeler/serve/health_tracker.h"
#include "labeler/serve/status_server.h"
#include "tests/fakes/http/raw_http_client.h"
#include "tests/support/manual_clock.h"

namespace cn::labeler {
namespace {

using namespace std::chrono_literals;

class HealthEndpoint : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<StatusServer>(metrics_, [this] {
      auto v = health_.verdict();
      return std::pair<bool, std::string>{v.ready, v.reason};
    });
    ASSERT_TRUE(server_->start("127.0.0.1:0"));
    target_ = fakes::HttpTarget::tcp("127.0.0.1", server_->port());
  }
  void TearDown() override { server_->stop(); }

  // (status, body) of /healthz and the gauge's line in /metrics.
  std::pair<int, std::string> healthz() {
    auto r = fakes::http_request(target_, "GET", "/healthz");
    EXPECT_TRUE(r);
    return r ? std::pair<int, std::string>{r->status, r->body} : std::pair<int, std::string>{0, ""};
  }
  std::string ready_gauge() {
    auto r = fakes::http_request(target_, "GET", "/metrics");
    EXPECT_TRUE(r);
    if (!r) return "";
    auto at = r->body.find("\ncilium_nomad_ready ");
    return at == std::string::npos ? ""
                                   : r->body.substr(at + 1, r->body.find('\n', at + 1) - at - 1);
  }

  ManualClock clock_;
  HealthTracker health_{clock_, 60s};
  Metrics metrics_;
  std::unique_ptr<StatusServer> server_;
  fakes::HttpTarget target_;
};

TEST_F(HealthEndpoint, NomadUnreachablePastTheWindowTurnsBothNotReadyAndBackWhenItAnswers) {
  health_.started();
  metrics_.ready().Set(1);  // what the daemon sets once; the scrape must override it
  EXPECT_EQ(healthz().first, 200);
  EXPECT_EQ(ready_gauge(), "cilium_nomad_ready 1");

  health_.failed(Dependency::kNomad, "Couldn't connect to server");
  clock_.advance(61s);
  auto [status, body] = healthz();
  EXPECT_EQ(status, 503);
  EXPECT_EQ(body, "not ready: Nomad unreachable for 61 s: Couldn't connect to server\n");
  EXPECT_EQ(ready_gauge(), "cilium_nomad_ready 0");

  health_.succeeded(Dependency::kNomad);
  EXPECT_EQ(healthz().first, 200);
  EXPECT_EQ(ready_gauge(), "cilium_nomad_ready 1");
}

TEST_F(HealthEndpoint, NotStartedIsNotReady) {
  EXPECT_EQ(healthz(), (std::pair<int, std::string>{503, "not ready: starting\n"}));
  EXPECT_EQ(ready_gauge(), "cilium_nomad_ready 0");
}

}  // namespace
}  // namespace cn::labeler
