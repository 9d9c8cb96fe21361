// The fake-cilium-agent executable: flags, readiness, the /_fake/ API from outside, clean exit.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "tests/fakes/http/raw_http_client.h"
#include "tests/fakes/tests/http_test_util.h"
#include "tests/support/child_process.h"

namespace cn::fakes {
namespace {

using namespace std::chrono_literals;
using cn::testing::current_environment;
using cn::testing::run_process;
using nlohmann::json;
using testing::eventually;
using testing::TempDir;

using cn::fakes::testing::fake_agent_binary;

// A child process we own (SIGKILLed and reaped if the test leaves early), with this process's
// environment so a sanitized build reports as ctest asked.
class Child {
 public:
  explicit Child(const std::vector<std::string>& argv)
      : process_(argv, current_environment(), cn::testing::ChildProcess::Options{}) {}
  // Sends `sig` and waits (bounded) for the exit code; -1 on timeout or signal death.
  int stop(int sig, std::chrono::milliseconds timeout = 5s) {
    auto status = process_.stop(sig, timeout);
    return status ? status->exit_code : -1;
  }

 private:
  cn::testing::ChildProcess process_;
};

TEST(FakeCiliumAgentBinary, ServesUntilSigtermThenRemovesItsSocket) {
  ASSERT_EQ(::access(fake_agent_binary().c_str(), X_OK), 0)
      << "CN_BIN_DIR not set or binary missing";
  TempDir dir;
  const std::string sock = dir.file("cilium.sock");
  const std::string ready = dir.file("ready");
  Child agent({fake_agent_binary(), "--socket", sock, "--version", "1.15", "--identity-delay-ms",
               "0", "--grace-period-ms", "0", "--rate-limits", "default", "--labels", "nomad:.*",
               "--ready-file", ready});
  ASSERT_TRUE(eventually([&] { return std::filesystem::exists(ready); }, 10s));
  const auto target = HttpTarget::unix_socket(sock);

  auto put = http_request(
      target, "PUT", "/v1/endpoint/cilium-local:0",
      R"({"container-id":"a1","container-interface-name":"eth0","state":"ready","sync-build-endpoint":true})");
  ASSERT_TRUE(put);
  EXPECT_EQ(put->status, 201);
  EXPECT_TRUE(put->body.empty()) << "--version 1.15";
  auto state = http_request(target, "GET", "/_fake/state");
  ASSERT_TRUE(state);
  const json s = json::parse(state->body);
  EXPECT_EQ(s["version"], "1.15");
  EXPECT_EQ(s["rate-limits"], true);
  EXPECT_EQ(s["allow-list"], true);
  EXPECT_EQ(s["endpoints"].size(), 3u);

  EXPECT_EQ(agent.stop(SIGTERM), 0);
  EXPECT_FALSE(std::filesystem::exists(sock));
}

TEST(FakeCiliumAgentBinary, RejectsBadFlags) {
  ASSERT_EQ(::access(fake_agent_binary().c_str(), X_OK), 0);
  for (const std::vector<std::string>& args : {std::vector<std::string>{"--version", "1.9"},
                                               {"--rate-limits", "sometimes"},
                                               {"--api-rate-limit", "endpoint-patch=bogus:1"}}) {
    std::vector<std::string> argv = {fake_agent_binary()};
    argv.insert(argv.end(), args.begin(), args.end());
    auto r = run_process(argv, current_environment(), "", 10s);
    ASSERT_TRUE(r.started && !r.timed_out) << r.err;
    EXPECT_EQ(r.exit_code, 2) << args[0] << ": " << r.err;
  }
}

}  // namespace
}  // namespace cn::fakes
