// Signals to the real labeler binary in the states an operator meets: still waiting for the
// Cilium agent or for Nomad at start-up, and running. SIGTERM and SIGINT stop it in every one of
// them; SIGHUP never does.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "tests/reliability/support/background_process.h"
#include "tests/reliability/support/fake_node.h"
#include "tests/reliability/support/wait.h"
#include "tests/support/temp_dir.h"

namespace cn::reliability {
namespace {

using namespace std::chrono_literals;

// A stopped daemon exits well inside this; one that ignores the signal fails here.
constexpr auto kExitDeadline = 10s;

class LabelerSignals : public ::testing::Test {
 protected:
  // The labeler with no Cilium agent at all: it listens, then waits for the agent.
  std::vector<std::string> waiting_for_agent_argv() const {
    return {testing::bin_dir() + "/cilium-nomad-labeler",
            "run",
            "--cilium-socket",
            dir_.file("no-agent/cilium.sock"),
            "--nomad-addr",
            "http://127.0.0.1:1",
            "--node-id",
            "node-1",
            "--socket",
            dir_.file("run/labeler.sock"),
            "--state-file",
            dir_.file("run/state.json"),
            "--metrics-addr",
            "127.0.0.1:0"};
  }

  std::unique_ptr<BackgroundProcess> start(const std::vector<std::string>& argv,
                                           const std::string& waiting_line) {
    auto p = std::make_unique<BackgroundProcess>(argv, sanitizer_env(), dir_.file("labeler.log"));
    EXPECT_TRUE(p->started());
    EXPECT_TRUE(p->wait_for_log(waiting_line)) << p->log();
    return p;
  }

  static std::map<std::string, std::string> sanitizer_env() {
    std::map<std::string, std::string> env;
    for (const char* name : {"ASAN_OPTIONS", "UBSAN_OPTIONS", "TSAN_OPTIONS", "LSAN_OPTIONS"}) {
      if (const char* v = std::getenv(name)) env[name] = v;
    }
    return env;
  }

  // Sent `sig`, the process exits 0 by itself after logging the shutdown.
  static void expect_clean_stop(BackgroundProcess& p, int sig) {
    auto status = p.kill_and_wait(sig, kExitDeadline);
    ASSERT_TRUE(status) << "still running " << kExitDeadline.count() << " s after the signal:\n"
                        << p.log();
    EXPECT_TRUE(status->exited()) << "killed by signal " << status->signal << "\n" << p.log();
    EXPECT_EQ(status->exit_code, 0) << p.log();
    EXPECT_NE(p.log().find("signal received, shutting down"), std::string::npos) << p.log();
    EXPECT_NE(p.log().find(" stopped"), std::string::npos) << p.log();
    EXPECT_EQ(sanitizer_report(p.log()), "");
  }

  testing::TempDir dir_;
};

// Expected: SIGTERM while the labeler still waits for the Cilium agent ends it with exit 0.
TEST_F(LabelerSignals, SigtermWhileWaitingForTheCiliumAgentExitsZero) {
  auto p = start(waiting_for_agent_argv(), "waiting for the Cilium agent");
  expect_clean_stop(*p, SIGTERM);
}

// Expected: SIGINT (Ctrl-C in a terminal) does the same.
TEST_F(LabelerSignals, SigintWhileWaitingForTheCiliumAgentExitsZero) {
  auto p = start(waiting_for_agent_argv(), "waiting for the Cilium agent");
  expect_clean_stop(*p, SIGINT);
}

// Expected: SIGTERM while the agent answers but Nomad does not (no --node-id, so the labeler
// asks Nomad for it) ends the labeler with exit 0.
TEST_F(LabelerSignals, SigtermWhileWaitingForNomadExitsZero) {
  FakeNode node;
  std::vector<std::string> argv = {testing::bin_dir() + "/cilium-nomad-labeler",
                                   "run",
                                   "--cilium-socket",
                                   node.cilium_socket(),
                                   "--nomad-addr",
                                   "http://127.0.0.1:1",
                                   "--socket",
                                   node.labeler_socket(),
                                   "--state-file",
                                   node.state_file(),
                                   "--metrics-addr",
                                   "127.0.0.1:0"};
  auto p = start(argv, "waiting for Nomad to tell this node's ID");
  expect_clean_stop(*p, SIGTERM);
}

// Expected: SIGTERM to a labeler that is running (ready, metrics server on) ends it with exit 0.
TEST_F(LabelerSignals, SigtermWhenReadyExitsZero) {
  FakeNode node;
  auto argv = node.labeler_argv({"--watch", "none"});
  auto flag = std::find(argv.begin(), argv.end(), "--metrics-addr");
  ASSERT_NE(flag, argv.end());
  *(flag + 1) = "127.0.0.1:0";  // CLI11 refuses the flag twice
  auto p = start(argv, "ready: node=");
  expect_clean_stop(*p, SIGTERM);
}

// Expected: SIGTERM to a busy labeler (a label write held by the agent, the node watch's blocking
// query parked at Nomad, a retry waiting out its backoff) ends it promptly: every outside call
// takes the daemon's stop, so nothing waits out its deadline (the write's is 30 s, the blocking
// query's 5 minutes). The bound here is the suite's 10 s, which a shutdown that waited for the
// write could not meet; the time taken is printed (about 0.1-0.4 s under ASan).
TEST_F(LabelerSignals, SigtermWithAWriteHeldByTheAgentAndAParkedWatchExitsPromptly) {
  if (::geteuid() != 0)
    GTEST_SKIP() << "the plugin's notification is accepted from root peers only";
  FakeNode node;
  auto argv = node.labeler_argv({"--watch", "node"});
  auto flag = std::find(argv.begin(), argv.end(), "--metrics-addr");
  ASSERT_NE(flag, argv.end());
  *(flag + 1) = "127.0.0.1:0";
  auto p = start(argv, "node watch started");
  node.agent().inject_fault(fakes::FaultRule::stall("PATCH", "/endpoint/{id}", 1000));
  const std::string held = node.running_alloc("10.200.90.1");
  ASSERT_EQ(node.plugin_add(held, "10.200.90.1", 0).exit_code, 0);
  // An allocation whose endpoint does not exist yet: its item waits out a retry backoff.
  const std::string early = node.place();
  ASSERT_EQ(node.plugin_add(early, "10.200.90.2", 0).exit_code, 0);
  ASSERT_TRUE(p->wait_for_log("not labeled: alloc=" + early)) << p->log();
  ASSERT_TRUE(p->wait_for_log("node watch")) << p->log();
  ASSERT_TRUE(eventually([&] { return node.agent().count("PATCH", "") >= 1; }, 10s))
      << "the write never reached the agent\n"
      << p->log();

  const auto sent = std::chrono::steady_clock::now();
  auto status = p->kill_and_wait(SIGTERM, kExitDeadline);
  const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - sent);
  ASSERT_TRUE(status) << p->log();
  EXPECT_TRUE(status->exited() && status->exit_code == 0) << p->log();
  EXPECT_LT(took, kExitDeadline) << p->log();
  std::printf("SIGTERM with a held write and a parked watch: exited after %lld ms\n",
              static_cast<long long>(took.count()));
  EXPECT_EQ(sanitizer_report(p->log()), "");
}

// Expected: SIGHUP is logged as ignored and the labeler keeps running (no exit 129); a later
// SIGTERM still stops it cleanly.
TEST_F(LabelerSignals, SighupIsLoggedAndIgnored) {
  auto p = start(waiting_for_agent_argv(), "waiting for the Cilium agent");
  ASSERT_TRUE(p->signal(SIGHUP));
  ASSERT_TRUE(p->wait_for_log("signal ignored: signal=1 name=SIGHUP")) << p->log();
  // Still alive after the line that says it ignored the signal: nothing else will act on it.
  EXPECT_TRUE(p->running()) << p->log();
  expect_clean_stop(*p, SIGTERM);
}

}  // namespace
}  // namespace cn::reliability
