// kill -9 of the real labeler in the middle of a burst of plugin ADDs, then a restart.
//
// Expected: every ADD exits 0 with prevResult unchanged (fails open while the labeler is dead);
// every one of the 200 endpoints ends with its job's labels, written exactly once; the state
// file holds each allocation exactly once with its own IP and the endpoint it was labeled on.
// Data lost: 0. The restart has no watch and no periodic resync on purpose: the startup
// reconcile alone must cover what the dead labeler missed, so a gap in it fails this test.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <thread>

#include "tests/reliability/support/background_process.h"
#include "tests/reliability/support/fake_node.h"
#include "tests/reliability/support/wait.h"

namespace cn::reliability {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

constexpr int kAllocs = 200;
constexpr int kKillAfter = 70;      // ADDs finished when the labeler dies
constexpr int kRestartAfter = 130;  // ADDs finished when it comes back
constexpr int kParallelStarts = 4;  // concurrent allocation starts, as on a busy node

std::string crash_ip_of(int i) {
  return "10.200." + std::to_string(10 + i / 250) + "." + std::to_string(i % 250 + 1);
}

// The log lines that mention `needle`, for a failure message.
std::string lines_about(const std::string& log, const std::string& needle) {
  std::string out;
  std::size_t begin = 0;
  while (begin < log.size()) {
    std::size_t end = log.find('\n', begin);
    if (end == std::string::npos) end = log.size();
    std::string line = log.substr(begin, end - begin);
    if (line.find(needle) != std::string::npos) out += line + "\n";
    begin = end + 1;
  }
  return out;
}

struct Start {
  std::string alloc;
  testing::ProcessResult add;
};

TEST(LabelerCrash, KillNineMidBurstOf200AddsThenRestartEveryEndpointLabeledOnceAndStateConsistent) {
  if (::geteuid() != 0) GTEST_SKIP() << "the labeler accepts notifications from root peers only";
  FakeNode node;
  const auto argv =
      node.labeler_argv({"--watch", "none", "--resync-interval", "0", "--workers", "4"});
  const std::string log_path = node.dir().file("labeler.log");
  auto labeler = std::make_unique<BackgroundProcess>(argv, node.labeler_env(), log_path);
  ASSERT_TRUE(labeler->wait_for_log("ready: node=")) << labeler->log();

  std::vector<Start> starts(kAllocs);
  std::atomic<int> next{0}, done{0};
  auto start_allocations = [&] {
    for (int i = next++; i < kAllocs; i = next++) {
      Start& s = starts[static_cast<std::size_t>(i)];
      s.alloc = node.place();
      node.create_endpoint(s.alloc, crash_ip_of(i));
      s.add = node.plugin_add(s.alloc, crash_ip_of(i), 3000);
      node.report_network(s.alloc, crash_ip_of(i));
      ++done;
    }
  };
  std::vector<std::jthread> burst;
  for (int t = 0; t < kParallelStarts; ++t) burst.emplace_back(start_allocations);

  ASSERT_TRUE(eventually([&] { return done >= kKillAfter; }, 60s));
  auto status = labeler->kill_and_wait(SIGKILL);
  ASSERT_TRUE(status && status->signal == SIGKILL);
  const int finished_at_kill = done;
  ASSERT_TRUE(eventually([&] { return done >= kRestartAfter; }, 60s));
  labeler = std::make_unique<BackgroundProcess>(argv, node.labeler_env(), log_path);
  for (auto& t : burst) t.join();
  ASSERT_TRUE(labeler->wait_for_log("ready: node=", 20s, 2)) << labeler->log();

  // Every allocation start succeeded, whatever the labeler was doing at the time.
  std::map<std::string, int> outcomes;
  for (int i = 0; i < kAllocs; ++i) {
    const Start& s = starts[static_cast<std::size_t>(i)];
    ASSERT_EQ(s.add.exit_code, 0) << s.add.err;
    EXPECT_EQ(json::parse(s.add.out), FakeNode::prev_result(crash_ip_of(i)))
        << "prevResult passed through unchanged";
    auto at = s.add.err.find("labeler=");
    ++outcomes[at == std::string::npos
                   ? "?"
                   : s.add.err.substr(at + 8, s.add.err.find(' ', at) - at - 8)];
  }
  EXPECT_GT(outcomes["labeled"], 0);
  EXPECT_GT(outcomes["unreachable"], 0) << "some ADDs ran while the labeler was dead";

  // Every endpoint ends labeled, and the agent got exactly one label write per endpoint.
  for (const auto& s : starts)
    ASSERT_TRUE(node.wait_labeled(s.alloc, kWebLabels)) << s.alloc << "\n" << labeler->log();
  int lost = 0, doubled = 0;
  for (const auto& s : starts) {
    lost += node.labeled(s.alloc, kWebLabels) ? 0 : 1;
    if (node.label_writes(s.alloc) > 1) {
      ++doubled;
      ADD_FAILURE() << "written " << node.label_writes(s.alloc) << " times: " << s.alloc << "\n"
                    << lines_about(labeler->log(), s.alloc) << "plugin: " << s.add.err;
    }
  }
  EXPECT_EQ(lost, 0);
  EXPECT_EQ(doubled, 0) << "an endpoint was written twice";

  // The state file: each allocation once, its own IP, the endpoint it was labeled on.
  auto check_state = [&]() -> std::string {
    StateFileView state = read_state_file(node.state_file());
    if (!state.parsed) return state.error;
    if (state.allocations.size() != static_cast<std::size_t>(kAllocs)) {
      return std::to_string(state.allocations.size()) + " entries";
    }
    for (int i = 0; i < kAllocs; ++i) {
      const std::string& id = starts[static_cast<std::size_t>(i)].alloc;
      if (count_occurrences(state.text, id) != 1) return id + " not exactly once";
      const json& e = state.allocations[id];
      if (e["ips"] != json::array({crash_ip_of(i)})) return id + " ips " + e["ips"].dump();
      auto ep = node.endpoint_of(id);
      if (!e.contains("labeled") || !ep || e["labeled"]["endpoint_id"] != (*ep)["id"]) {
        return id + " labeled " + e.value("labeled", json()).dump();
      }
    }
    return {};
  };
  std::string problem;
  EXPECT_TRUE(eventually([&] { return (problem = check_state()).empty(); })) << problem;

  std::size_t temp_files = 0;
  for (const auto& f : std::filesystem::directory_iterator(node.dir().file("run"))) {
    temp_files += f.path().filename().string().find(".tmp.") != std::string::npos ? 1 : 0;
  }
  std::printf(
      "kill -9 after %d of %d ADDs; outcomes: labeled=%d unreachable=%d other=%d; "
      "leftover temp files of the killed writer: %zu\n",
      finished_at_kill, kAllocs, outcomes["labeled"], outcomes["unreachable"],
      kAllocs - outcomes["labeled"] - outcomes["unreachable"], temp_files);
  RecordProperty("finished_at_kill", finished_at_kill);

  auto exit_status = labeler->kill_and_wait(SIGTERM);
  EXPECT_TRUE(exit_status && exit_status->exit_code == 0) << "clean shutdown on SIGTERM";
  EXPECT_EQ(sanitizer_report(labeler->log()), "");
}

}  // namespace
}  // namespace cn::reliability
