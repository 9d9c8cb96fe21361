// One labeler per node, through the real binary: a second `run` on the same state file, with a
// socket of its own (so that the socket's liveness check cannot be what stops it), waits
// while the first holds the node, names it, takes over when it stops, and gives up with exit
// status 3 at the end of --lock-wait. Neither gets as far as needing Cilium or Nomad to answer.
#include <gtest/gtest.h>

#include <csignal>
#include <map>
#include <string>
#include <vector>

#include "tests/support/eventually.h"
#include "tests/support/process.h"
#include "tests/support/temp_dir.h"

namespace cn::labeler {
namespace {

using namespace std::chrono_literals;

class LabelerNodeLock : public ::testing::Test {
 protected:
  // Both labelers get the same node: state file, unreachable Cilium and Nomad; the second one
  // passes its own --socket.
  std::vector<std::string> argv(const std::map<std::string, std::string>& extra = {}) const {
    std::map<std::string, std::string> flags = {{"--cilium-socket", dir_.file("cilium.sock")},
                                                {"--nomad-addr", "http://127.0.0.1:1"},
                                                {"--node-id", "node-1"},
                                                {"--socket", dir_.file("run/labeler.sock")},
                                                {"--state-file", dir_.file("run/state.json")},
                                                {"--metrics-addr", ""}};
    for (const auto& [flag, value] : extra) flags[flag] = value;
    std::vector<std::string> args = {testing::bin_dir() + "/cilium-nomad-labeler", "run"};
    for (const auto& [flag, value] : flags) {
      args.push_back(flag);
      args.push_back(value);
    }
    return args;
  }

  std::unique_ptr<testing::ChildProcess> start(
      const std::string& name, const std::map<std::string, std::string>& extra = {}) {
    testing::ChildProcess::Options options;
    options.log_path = dir_.file(name + ".log");
    auto child = std::make_unique<testing::ChildProcess>(
        argv(extra), testing::with_sanitizer_options({}), options);
    EXPECT_TRUE(child->started()) << child->start_error();
    return child;
  }

  static bool logged(const testing::ChildProcess& child, const std::string& text) {
    return child.log().find(text) != std::string::npos;
  }

  // The first labeler, once it holds the node and has gone on to start.
  std::unique_ptr<testing::ChildProcess> start_holder() {
    auto first = start("first");
    EXPECT_TRUE(testing::eventually([&] {
      return logged(*first, "starting cilium-nomad-labeler");
    })) << first->log();
    return first;
  }

  std::string waiting_line(pid_t holder) const {
    return "another labeler holds this node, waiting: holder_pid=" + std::to_string(holder) +
           " file=" + dir_.file("run/state.json.labeler.lock");
  }

  testing::TempDir dir_;
};

// Expected: the second labeler names the holder and waits without starting; once the first is
// stopped, it takes the lock and starts.
TEST_F(LabelerNodeLock, SecondLabelerWaitsAndTakesOverWhenTheFirstStops) {
  auto first = start_holder();
  ASSERT_FALSE(HasFailure());
  auto second = start("second", {{"--socket", dir_.file("run/second.sock")}});
  ASSERT_TRUE(testing::eventually([&] { return logged(*second, waiting_line(first->pid())); }))
      << second->log();
  EXPECT_FALSE(logged(*second, "starting cilium-nomad-labeler")) << second->log();

  auto first_exit = first->stop(SIGTERM, 10s);
  ASSERT_TRUE(first_exit) << first->log();
  EXPECT_EQ(first_exit->exit_code, 0) << first->log();
  ASSERT_TRUE(testing::eventually([&] { return logged(*second, "starting cilium-nomad-labeler"); }))
      << second->log();
  EXPECT_TRUE(logged(*second, "node lock taken: file=" + dir_.file("run/state.json.labeler.lock")));
  EXPECT_TRUE(second->running()) << second->log();
  auto second_exit = second->stop(SIGTERM, 10s);
  ASSERT_TRUE(second_exit) << second->log();
  EXPECT_EQ(second_exit->exit_code, 0) << second->log();
}

// Expected: still held at the end of --lock-wait: exit status 3, the holder named.
TEST_F(LabelerNodeLock, SecondLabelerExitsThreeAtTheEndOfItsWait) {
  auto first = start_holder();
  ASSERT_FALSE(HasFailure());
  auto r = testing::run_process(
      argv({{"--lock-wait", "300ms"}, {"--socket", dir_.file("run/second.sock")}}),
      testing::with_sanitizer_options({}), "", 20s);
  EXPECT_FALSE(r.timed_out) << r.err;
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find(waiting_line(first->pid())), std::string::npos) << r.err;
  EXPECT_NE(
      r.err.find("another labeler holds this node: holder_pid=" + std::to_string(first->pid())),
      std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("starting cilium-nomad-labeler"), std::string::npos) << r.err;
  EXPECT_TRUE(first->running()) << first->log();
}

// Expected: SIGTERM while waiting ends the wait at once with status 0.
TEST_F(LabelerNodeLock, SigtermWhileWaitingExitsZero) {
  auto first = start_holder();
  ASSERT_FALSE(HasFailure());
  auto second =
      start("second", {{"--lock-wait", "10m"}, {"--socket", dir_.file("run/second.sock")}});
  ASSERT_TRUE(testing::eventually([&] { return logged(*second, waiting_line(first->pid())); }))
      << second->log();
  ASSERT_TRUE(second->signal(SIGTERM));
  auto exit = second->wait_for(5s);
  ASSERT_TRUE(exit) << "still waiting after SIGTERM:\n" << second->log();
  EXPECT_EQ(exit->exit_code, 0) << second->log();
  EXPECT_TRUE(logged(*second, "stopped while waiting for the node lock")) << second->log();
}

// Expected: the read-only subcommands do not take the lock: they answer at once beside a
// running labeler (exit 0, or 1 for a state file not written yet), never wait, never exit 3.
TEST_F(LabelerNodeLock, ReadOnlySubcommandsDoNotWaitForTheHolder) {
  auto first = start_holder();
  ASSERT_FALSE(HasFailure());
  const std::string bin = testing::bin_dir() + "/cilium-nomad-labeler";
  const std::string state = dir_.file("run/state.json");
  for (const auto& args :
       {std::vector<std::string>{bin, "state", "--state-file", state},
        std::vector<std::string>{bin, "policy", "status", "--state-file", state}}) {
    auto r = testing::run_process(args, testing::with_sanitizer_options({}), "", 20s);
    EXPECT_FALSE(r.timed_out) << args[1] << ": " << r.err;
    EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 1) << args[1] << ": " << r.exit_code << r.err;
    EXPECT_EQ(r.err.find("another labeler holds this node"), std::string::npos) << r.err;
  }
  EXPECT_TRUE(first->running()) << first->log();
}

}  // namespace
}  // namespace cn::labeler
