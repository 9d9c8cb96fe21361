// Which way the agent takes services, asked of the fake agent as each release answers: its
// GET /v1/healthz release, or, while it has no status yet, whether /v1/service/{id} is routed.
#include <gtest/gtest.h>

#include <memory>

#include "common/cilium/client/curl_cilium_client.h"
#include "labeler/services/lb_api_detect.h"
#include "tests/fakes/cilium/fake_cilium_agent.h"
#include "tests/support/temp_dir.h"

namespace cn::labeler {
namespace {

using namespace std::chrono_literals;
using fakes::CiliumVersion;

struct Emulated {
  CiliumVersion version;
  int patch;
  LbApi api;
  bool shared_backends_safe;
};

class LbApiDetectTest : public ::testing::TestWithParam<Emulated> {
 protected:
  void start(const Emulated& e) {
    fakes::FakeCiliumAgentConfig cfg;
    cfg.socket_path = dir_.file("cilium.sock");
    cfg.version = e.version;
    cfg.version_patch = e.patch;
    agent_ = std::make_unique<fakes::FakeCiliumAgent>(cfg);
    agent_->start();
    cilium::CiliumClientConfig c;
    c.socket_path = cfg.socket_path;
    c.retry_seed = 1;
    client_ = std::make_unique<cilium::CurlCiliumClient>(c);
  }
  void TearDown() override {
    if (agent_) agent_->stop();
  }
  static Deadline soon() { return Deadline{system_clock().now() + 10s}; }

  cn::testing::TempDir dir_;
  std::unique_ptr<fakes::FakeCiliumAgent> agent_;
  std::unique_ptr<cilium::CurlCiliumClient> client_;
};

TEST_P(LbApiDetectTest, TheReleaseDecides) {
  const Emulated e = GetParam();
  start(e);
  auto d = detect_lb_api(*client_, soon());
  ASSERT_TRUE(d) << d.error().message;
  EXPECT_EQ(d->api, e.api);
  EXPECT_EQ(d->shared_backends_safe, e.shared_backends_safe);
  ASSERT_TRUE(d->version);
  EXPECT_EQ(d->version->major, 1);
  EXPECT_EQ(d->version->patch, e.patch);
  EXPECT_EQ(agent_->count("GET", "/service/{id}"), 0);
}

TEST_P(LbApiDetectTest, WithoutAReleaseTheRemovedRouteDecides) {
  const Emulated e = GetParam();
  start(e);
  // Newer agents answer so until every status probe ran once (pkg/status/status_collector.go).
  agent_->set_daemon_health("Warning", "Not all probes executed at least once");
  auto d = detect_lb_api(*client_, soon());
  ASSERT_TRUE(d) << d.error().message;
  EXPECT_EQ(d->api, e.api);
  EXPECT_FALSE(d->version);
  EXPECT_FALSE(d->shared_backends_safe);
  EXPECT_EQ(agent_->count("GET", "/service/{id}"), 1);
}

INSTANTIATE_TEST_SUITE_P(
    Releases, LbApiDetectTest,
    ::testing::Values(Emulated{CiliumVersion::v1_16, 19, LbApi::rest, false},
                      Emulated{CiliumVersion::v1_17, 17, LbApi::rest, false},
                      Emulated{CiliumVersion::v1_18, 5, LbApi::state_file, false},
                      Emulated{CiliumVersion::v1_19, 4, LbApi::state_file, false},
                      Emulated{CiliumVersion::v1_19, 5, LbApi::state_file, true},
                      Emulated{CiliumVersion::v1_20, 0, LbApi::state_file, true}));

TEST(AgentVersionText, ReadsWhatTheAgentWrites) {
  auto v = cilium::parse_agent_version_text("1.17.3 (v1.17.3-4b1f6c2e)    Stale status data");
  ASSERT_TRUE(v);
  EXPECT_EQ(v->minor, 17);
  EXPECT_EQ(v->patch, 3);
  EXPECT_FALSE(v->prerelease);
  auto rc = cilium::parse_agent_version_text("1.19.5-rc.1 (v1.19.5-rc.1-abcdef)");
  ASSERT_TRUE(rc);
  EXPECT_TRUE(rc->prerelease);
  EXPECT_FALSE(lb_api_for(*rc).shared_backends_safe);
  EXPECT_TRUE(lb_api_for(*cilium::parse_agent_version_text("1.19.6")).shared_backends_safe);
  EXPECT_FALSE(cilium::parse_agent_version_text("Not all probes executed at least once"));
  EXPECT_FALSE(cilium::parse_agent_version_text("1.17"));
  EXPECT_FALSE(cilium::parse_agent_version_text("1.17.3x"));
}

}  // namespace
}  // namespace cn::labeler
