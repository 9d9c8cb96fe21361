// `cilium-nomad-labeler run` where it cannot start: the real binary must exit non-zero at once
// with one line naming the cause, so that systemd's Restart= and Nomad's restart policy see it.
// None of these cases gets as far as calling Cilium or Nomad, so neither is faked here.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <mutex>

#include "common/notify/notify_client.h"
#include "labeler/serve/notify_server.h"
#include "tests/support/process.h"
#include "tests/support/temp_dir.h"

namespace cn::labeler {
namespace {

using namespace std::chrono_literals;

// The requirement is one second; the margin covers a sanitizer build on a loaded machine. The
// measured time is printed, and a daemon that stays alive fails at this deadline either way.
constexpr auto kExitDeadline = 5s;

class LabelerStartup : public ::testing::Test {
 protected:
  // `flags` replace the defaults below or add to them.
  // The state file is not beside the socket: where a test makes the socket's directory
  // unusable, the node lock beside the state file would fail first.
  std::vector<std::string> argv(const std::map<std::string, std::string>& flags) const {
    std::map<std::string, std::string> all = {{"--cilium-socket", dir_.file("cilium.sock")},
                                              {"--nomad-addr", "http://127.0.0.1:1"},
                                              {"--node-id", "node-1"},
                                              {"--socket", dir_.file("run/labeler.sock")},
                                              {"--state-file", dir_.file("state/state.json")},
                                              {"--metrics-addr", ""}};
    for (const auto& [flag, value] : flags) all[flag] = value;
    std::vector<std::string> args = {testing::bin_dir() + "/cilium-nomad-labeler", "run"};
    for (const auto& [flag, value] : all) {
      args.push_back(flag);
      args.push_back(value);
    }
    return args;
  }

  static std::map<std::string, std::string> env() {
    std::map<std::string, std::string> e;
    for (const char* name : {"ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS", "TSAN_OPTIONS"}) {
      if (const char* v = std::getenv(name)) e[name] = v;
    }
    return e;
  }

  // Runs the labeler, expecting it to exit by itself before kExitDeadline.
  testing::ProcessResult run(const std::map<std::string, std::string>& flags) const {
    auto started = std::chrono::steady_clock::now();
    auto result = testing::run_process(argv(flags), env(), "", kExitDeadline);
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - started);
    std::printf("labeler exited after %lld ms\n", static_cast<long long>(ms.count()));
    return result;
  }

  static int count(const std::string& haystack, const std::string& needle) {
    int n = 0;
    for (auto at = haystack.find(needle); at != std::string::npos;
         at = haystack.find(needle, at + 1))
      ++n;
    return n;
  }

  // Exited non-zero by itself, with exactly one "cannot start" line that says `cause`.
  static void expect_cannot_start(const testing::ProcessResult& r, const std::string& cause) {
    EXPECT_FALSE(r.timed_out) << "still running after the deadline:\n" << r.err;
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_EQ(count(r.err, "cannot start:"), 1) << r.err;
    EXPECT_NE(r.err.find("cannot start: error=\"" + cause), std::string::npos) << r.err;
  }

  testing::TempDir dir_;
};

// Expected: a regular file where the socket's directory should be ends the daemon with the
// directory named and mkdir's errno text.
TEST_F(LabelerStartup, SocketDirectoryThatIsARegularFileExitsNonZeroAtOnce) {
  testing::write_file(dir_.file("run"), "not a directory");
  auto r = run({});
  expect_cannot_start(
      r, "notification socket directory " + dir_.file("run") + " is not a directory (File exists)");
}

// Expected: a regular file higher up the socket's path: the directory cannot be created.
TEST_F(LabelerStartup, SocketDirectoryBelowARegularFileExitsNonZeroAtOnce) {
  testing::write_file(dir_.file("file"), "x");
  auto r = run({{"--socket", dir_.file("file/run/labeler.sock")}});
  expect_cannot_start(r, "cannot create notification socket directory " + dir_.file("file/run") +
                             " (Not a directory)");
}

// Expected: a socket path longer than a Unix socket address can hold is refused by name.
TEST_F(LabelerStartup, SocketPathTooLongExitsNonZeroAtOnce) {
  const std::string path = dir_.file(std::string(120, 's') + ".sock");
  auto r = run({{"--socket", path}});
  expect_cannot_start(
      r, "notification socket path " + path + " is longer than 107 bytes (File name too long)");
}

// Expected: a second labeler on a node whose labeler is alive exits at once and leaves the live
// one's socket in place; the live one does not take the second one's probe for a notification.
TEST_F(LabelerStartup, SecondLabelerOnALiveSocketExitsNonZeroAtOnceAndLeavesTheFirstAlone) {
  Metrics metrics;
  NotifyServer first({dir_.file("run/labeler.sock"), {0, static_cast<unsigned>(::getuid())}},
                     system_clock(), metrics, nullptr);
  ASSERT_TRUE(first.listen());
  std::mutex mu;
  std::condition_variable cv;
  int requests = 0;
  first.start([&](const notify::Request&) {
    std::lock_guard lock(mu);
    ++requests;
    cv.notify_all();
  });

  auto r = run({});
  expect_cannot_start(r, "another labeler is listening on notification socket " +
                             dir_.file("run/labeler.sock") + " (Address already in use)");

  // The first labeler still answers on its socket, and had read the probe before this request.
  notify::Request req;
  req.alloc_id = "4b1f6c2e-8d3a-4f57-9c2b-7e0a5d9c3f11";
  req.ifname = "eth0";
  ASSERT_TRUE(notify::send_request(dir_.file("run/labeler.sock"), req, system_clock(),
                                   system_clock().now() + 5s));
  {
    std::unique_lock lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, 10s, [&] { return requests == 1; }));
  }
  EXPECT_EQ(metrics.notifications(std::nullopt, NotifyOutcome::unreadable).Value(), 0);
  first.stop();
}

// Expected: the same with the metrics server on, ten times over: it is started before the
// socket fails, and stopping it right after its start must never hang the exit.
TEST_F(LabelerStartup, SecondLabelerWithMetricsServerExitsEveryTime) {
  Metrics metrics;
  NotifyServer first({dir_.file("run/labeler.sock"), {0, static_cast<unsigned>(::getuid())}},
                     system_clock(), metrics, nullptr);
  ASSERT_TRUE(first.listen());
  first.start([](const notify::Request&) {});
  for (int i = 0; i < 10; ++i) {
    auto r = run({{"--metrics-addr", "127.0.0.1:0"}});
    expect_cannot_start(r, "another labeler is listening");
    if (HasFailure()) break;
  }
  first.stop();
}

// Expected: a metrics port another process holds ends the daemon with the address and errno.
TEST_F(LabelerStartup, BusyMetricsPortExitsNonZeroAtOnce) {
  int holder = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(holder, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(holder, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(holder, 1), 0);
  socklen_t len = sizeof addr;
  ASSERT_EQ(::getsockname(holder, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  const std::string address = "127.0.0.1:" + std::to_string(ntohs(addr.sin_port));

  auto r = run({{"--metrics-addr", address}});
  ::close(holder);
  expect_cannot_start(r,
                      "metrics address " + address + " is not available (Address already in use)");
  EXPECT_FALSE(std::filesystem::exists(dir_.file("run/labeler.sock"))) << "failed before listening";
}

// Expected: a metrics address without a port is a usage error, refused while parsing.
TEST_F(LabelerStartup, MetricsAddressWithoutPortIsAUsageError) {
  auto r = run({{"--metrics-addr", "localhost"}});
  EXPECT_FALSE(r.timed_out) << r.err;
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.err,
            "cilium-nomad-labeler: run: --metrics-addr: localhost is not HOST:PORT; see --help\n");
}

// Expected: a bad --nomad-addr names the flag (not NOMAD_ADDR, which was not used) and the
// accepted forms, unix:// included.
TEST_F(LabelerStartup, BadNomadAddrNamesTheFlagAndUnixForm) {
  auto r = run({{"--nomad-addr", "nomad.service.consul:4646"}});
  EXPECT_FALSE(r.timed_out) << r.err;
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--nomad-addr: nomad.service.consul:4646: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("unix://"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("NOMAD_ADDR"), std::string::npos) << r.err;
}

// Expected: a configuration mistake exits 2 (usage) at once, before any thread starts.
TEST_F(LabelerStartup, InvalidMetaLabelsExitTwoAtOnce) {
  auto r = run({{"--meta-labels", "bad key!"}});
  EXPECT_FALSE(r.timed_out) << r.err;
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.err.rfind("cilium-nomad-labeler: run: --meta-labels: ", 0), 0u) << r.err;
}

}  // namespace
}  // namespace cn::labeler
