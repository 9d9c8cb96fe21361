// The plugin's wait, end to end inside one process: the real notify client talks to the
// daemon's socket, the daemon labels through the in-memory APIs and answers.
#include <gtest/gtest.h>

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <future>

#include "common/notify/notify_client.h"
#include "labeler/daemon/labeler_daemon.h"
#include "tests/support/alloc_ids.h"
#include "tests/support/child_process.h"
#include "tests/support/eventually.h"
#include "tests/support/temp_dir.h"
#include "tests/unit/labeler/in_memory_apis.h"

namespace cn::labeler {
namespace {

using cn::testing::CiliumCall;
using cn::testing::InMemoryCilium;
using cn::testing::InMemoryNomad;
using cn::testing::make_alloc;

using cn::testing::kAllocId;
// Set only in the copy of this binary that NonRootPeersAreRefused starts as another user.
constexpr const char* kPeerSocketVar = "CN_TEST_NOTIFY_PEER_SOCKET";

Result<std::optional<notify::Reply>> notify_add_to(const std::string& socket, int wait_ms,
                                                   cni::NomadWorkload args = {}) {
  notify::Request r;
  r.nomad = std::move(args);
  r.op = notify::Op::kAdd;
  r.alloc_id = kAllocId;
  r.ifname = "eth0";
  r.ips = {"10.200.3.17"};
  r.wait_ms = wait_ms;
  auto& clock = system_clock();
  return notify::send_request(socket, r, clock,
                              clock.now() + std::chrono::milliseconds{std::max(wait_ms, 1000)});
}

class DaemonTest : public ::testing::Test {
 protected:
  void start(DaemonConfig config = {}) {
    config.socket_path = dir_.file("run/labeler.sock");
    config.state_file = dir_.file("run/state.json");
    config.resync_interval = std::chrono::seconds{0};
    config.metrics_addr = "";
    if (config.allowed_uids == std::vector<unsigned>{0})
      config.allowed_uids = {0, static_cast<unsigned>(::getuid())};
    daemon_ = std::make_unique<LabelerDaemon>(config, nomad_, cilium_, system_clock(), nullptr);
    std::stop_source never;
    ASSERT_TRUE(daemon_->start(never.get_token()));
    ASSERT_TRUE(daemon_->ready());
  }

  Result<std::optional<notify::Reply>> notify_add(int wait_ms, cni::NomadWorkload args = {}) {
    return notify_add_to(dir_.file("run/labeler.sock"), wait_ms, std::move(args));
  }

  cn::testing::TempDir dir_;
  InMemoryNomad nomad_;
  InMemoryCilium cilium_;
  std::unique_ptr<LabelerDaemon> daemon_;
};

TEST_F(DaemonTest, WaitingPluginHearsLabeledOnlyOnceTheIdentityResolved) {
  nomad_.put(make_alloc(kAllocId));
  auto ep = cilium_.add_init_endpoint(kAllocId, "10.200.3.17");
  cilium_.gets_until_resolved = 3;
  start();
  auto reply = notify_add(5000);
  ASSERT_TRUE(reply) << reply.error().message;
  ASSERT_TRUE(reply->has_value());
  EXPECT_EQ((*reply)->status, notify::ReplyStatus::kLabeled) << (*reply)->message;
  EXPECT_EQ((*reply)->endpoint_id, ep);
  EXPECT_GE((*reply)->identity, 256);
  EXPECT_FALSE(cilium::is_init(cilium_.get(ep)));
}

// Nomad off the notification path: the plugin hears "labeled" from CNI_ARGS alone; Nomad is asked
// afterwards, once, and agrees, so nothing is written again.
TEST_F(DaemonTest, CniArgsLabelAtOnceAndNomadIsAskedOnceAfterTheReply) {
  auto ep = cilium_.add_init_endpoint(kAllocId, "10.200.3.17");
  DaemonConfig config;
  config.watch = WatchMode::kNone;
  start(config);
  const int gets_before = nomad_.calls(cn::testing::NomadCall::allocation);
  nomad_.put(make_alloc(kAllocId));  // placed after the startup reconcile: not in the cache
  auto reply = notify_add(5000, {"global", "default", "web", "app", kAllocId});
  ASSERT_TRUE(reply) << reply.error().message;
  ASSERT_TRUE(reply->has_value());
  EXPECT_EQ((*reply)->status, notify::ReplyStatus::kLabeled) << (*reply)->message;
  EXPECT_EQ(cilium_.get(ep).identity_labels, cn::testing::kWebLabels);
  EXPECT_TRUE(cn::testing::eventually([&] {
    return nomad_.calls(cn::testing::NomadCall::allocation) == gets_before + 1;
  })) << "the check against Nomad";
  ASSERT_TRUE(daemon_->queue().wait_idle(std::chrono::seconds{10}));
  EXPECT_EQ(nomad_.calls(cn::testing::NomadCall::allocation), gets_before + 1);
  EXPECT_EQ(cilium_.calls(CiliumCall::patch_endpoint), 1);
  EXPECT_EQ(daemon_->metrics().cni_args_relabels().Value(), 0);
  EXPECT_EQ(daemon_->metrics().identity_sources(IdentitySource::cni_args).Value(), 1);
  EXPECT_EQ(daemon_->alloc_cache().size(), 1u) << "the check's GET filled the cache";
}

TEST_F(DaemonTest, PluginIsToldPendingBeforeItsDeadlineWhenLabelingCannotFinish) {
  nomad_.put(make_alloc(kAllocId));
  start();  // no endpoint at all: the labeler keeps looking until the plugin's deadline nears
  auto reply = notify_add(300);
  ASSERT_TRUE(reply) << reply.error().message;
  ASSERT_TRUE(reply->has_value());
  EXPECT_EQ((*reply)->status, notify::ReplyStatus::kPending);
  EXPECT_NE((*reply)->message.find("last attempt: no endpoint for this allocation yet"),
            std::string::npos)
      << (*reply)->message;
}

// A failure that will be retried does not end the plugin's wait: the retry may still label the
// endpoint before the workload starts.
TEST_F(DaemonTest, ARetryableFailureKeepsThePluginWaitingForTheRetry) {
  nomad_.put(make_alloc(kAllocId));
  start();
  auto waiting = std::async(std::launch::async, [&] { return notify_add(10'000); });
  ASSERT_TRUE(cn::testing::eventually([&] {
    return daemon_->metrics().label_failures(LabelFailure::endpoint_not_found).Value() >= 1;
  }));
  auto ep = cilium_.add_init_endpoint(kAllocId, "10.200.3.17");  // cilium-cni was slow
  auto reply = waiting.get();
  ASSERT_TRUE(reply) << reply.error().message;
  ASSERT_TRUE(reply->has_value());
  EXPECT_EQ((*reply)->status, notify::ReplyStatus::kLabeled) << (*reply)->message;
  EXPECT_EQ((*reply)->endpoint_id, ep);
}

TEST_F(DaemonTest, StartupReconcileLabelsWhatExistedBefore) {
  nomad_.put(make_alloc(kAllocId));
  auto ep = cilium_.add_init_endpoint(kAllocId, "10.200.3.17");
  start();
  ASSERT_TRUE(daemon_->queue().wait_idle(std::chrono::seconds{10}));
  EXPECT_FALSE(cilium::is_init(cilium_.get(ep)));
}

TEST_F(DaemonTest, NonRootPeersAreRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to act as another user";
  nomad_.put(make_alloc(kAllocId));
  auto ep = cilium_.add_init_endpoint(kAllocId, "10.200.3.17");
  DaemonConfig config;
  config.allowed_uids = {0};
  config.socket_path = dir_.file("run/labeler.sock");
  // The directory is root-only on purpose; open it up here so the refusal is SO_PEERCRED's.
  start(config);
  ::chmod(dir_.path().c_str(), 0755);
  ::chmod(dir_.file("run").c_str(), 0755);
  ::chmod(dir_.file("run/labeler.sock").c_str(), 0666);
  ASSERT_TRUE(daemon_->queue().wait_idle(std::chrono::seconds{10}));
  int writes_before = cilium_.calls(CiliumCall::patch_endpoint);

  // The peer is this test binary again, run as uid/gid 65534 with only the peer test selected.
  const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  auto peer = cn::testing::run_process(
      {self, "--gtest_filter=DaemonPeer.NotifyAddIsRefused"},
      cn::testing::with_sanitizer_options({{kPeerSocketVar, dir_.file("run/labeler.sock")}}), "",
      std::chrono::seconds{30}, cn::testing::Credentials{65534, 65534});
  ASSERT_FALSE(peer.timed_out) << peer.out << peer.err;
  // It must have run (not skipped) and passed: the refusal was seen from the peer's side.
  EXPECT_EQ(peer.exit_code, 0) << peer.out << peer.err;
  EXPECT_NE(peer.out.find("[  PASSED  ] 1 test"), std::string::npos) << peer.out;
  EXPECT_EQ(peer.out.find("SKIPPED"), std::string::npos) << peer.out;
  EXPECT_EQ(daemon_->metrics().notifications(std::nullopt, NotifyOutcome::refused_peer).Value(), 1);
  EXPECT_EQ(cilium_.calls(CiliumCall::patch_endpoint), writes_before);
  (void)ep;
}

TEST_F(DaemonTest, SocketDirectoryIsRootOnlyAndSocketRemovedOnStop) {
  start();
  struct stat st {};
  ASSERT_EQ(::stat(dir_.file("run").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  daemon_->stop();
  EXPECT_NE(::access(dir_.file("run/labeler.sock").c_str(), F_OK), 0);
}

// The non-root peer of DaemonTest.NonRootPeersAreRefused, run in a separate process as another
// user; skipped in an ordinary run.
TEST(DaemonPeer, NotifyAddIsRefused) {
  const char* socket = std::getenv(kPeerSocketVar);
  if (!socket) GTEST_SKIP() << "started only by DaemonTest.NonRootPeersAreRefused";
  ASSERT_NE(::getuid(), 0u);
  auto reply = notify_add_to(socket, 2000);
  // Refused: the connection closes without a reply.
  EXPECT_FALSE(reply) << "the daemon answered a peer that is not allowed";
}

}  // namespace
}  // namespace cn::labeler
