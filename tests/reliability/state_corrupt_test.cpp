// A corrupt state file (disk damage, a hand edit gone wrong, a truncated copy).
#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <regex>

#include "tests/reliability/support/background_process.h"
#include "tests/reliability/support/fake_node.h"
#include "tests/reliability/support/wait.h"

namespace cn::reliability {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

// Half of a real state file followed by bytes that are not UTF-8.
std::string corrupt_text() {
  std::string good =
      "{\"schema\":1,\"allocations\":{\n\"4b1f6c2e-8d3a-4f57-9c2b-7e0a5d9c3f11\":{\"ifname\":"
      "\"eth0\",\"ips\":[\"10.2";
  return good + std::string("\x00\xff\xfe garbage", 12);
}

// The files the store moved aside, by name.
std::vector<std::string> quarantined(const std::string& dir) {
  std::vector<std::string> out;
  static const std::regex name(R"(state\.json\.corrupt-[0-9]{13})");
  for (const auto& f : std::filesystem::directory_iterator(dir)) {
    if (std::regex_match(f.path().filename().string(), name)) out.push_back(f.path().string());
  }
  return out;
}

// Expected: the labeler's startup finds the state file corrupt, logs it, keeps it aside as
// state.json.corrupt-<unix ms> byte for byte, starts a fresh file, and rebuilds the entry of
// every allocation running here from Cilium and Nomad (its IP and labeled endpoint) while
// labeling the endpoint. Data lost: 0 (the bad bytes are kept for a post-mortem).
TEST(StateCorrupt, LabelerKeepsTheCorruptFileAsideAndRebuildsTheStateFromCiliumAndNomad) {
  if (::geteuid() != 0) GTEST_SKIP() << "runs the labeler binary, which needs root for its socket";
  FakeNode node;
  std::filesystem::create_directories(node.dir().file("run"));
  testing::write_file(node.state_file(), corrupt_text());
  std::string alloc = node.running_alloc("10.200.80.1");
  std::string second = node.running_alloc("10.200.80.2");
  // An endpoint of no live allocation: an orphan, which must not be invented into the state.
  node.create_endpoint("4b1f6c2e-8d3a-4f57-9c2b-7e0a5d9c3f11", "10.200.80.9");

  BackgroundProcess labeler(node.labeler_argv({"--watch", "none", "--resync-interval", "0"}),
                            node.labeler_env(), node.dir().file("labeler.log"));
  ASSERT_TRUE(labeler.wait_for_log("ready: node=")) << labeler.log();
  EXPECT_NE(labeler.log().find("state file corrupt, moved aside and starting fresh"),
            std::string::npos)
      << labeler.log();
  auto aside = quarantined(node.dir().file("run"));
  ASSERT_EQ(aside.size(), 1u);
  EXPECT_EQ(testing::read_file(aside[0]), corrupt_text()) << "kept byte for byte";

  for (const auto& a : {alloc, second})
    ASSERT_TRUE(node.wait_labeled(a, kWebLabels)) << labeler.log();
  auto check = [&]() -> std::string {
    auto state = read_state_file(node.state_file());
    if (!state.parsed) return state.error;
    for (const auto& [a, ip] :
         {std::pair{alloc, "10.200.80.1"}, std::pair{second, "10.200.80.2"}}) {
      if (!state.allocations.contains(a)) return a + " missing";
      const json& e = state.allocations[a];
      if (e["ips"] != json::array({ip}) || !e.contains("labeled") || e["nomad"]["job"] != "web")
        return e.dump();
    }
    if (state.allocations.size() != 2) return "unexpected entries: " + state.text;
    return {};
  };
  std::string problem;
  EXPECT_TRUE(eventually([&] { return (problem = check()).empty(); })) << problem;
  EXPECT_EQ(sanitizer_report(labeler.log()), "");
}

// Expected: a plugin ADD that meets a corrupt state file still exits 0 with prevResult, moves
// the file aside (logged), and records its own allocation in a fresh, valid file.
TEST(StateCorrupt, PluginAddMovesTheCorruptFileAsideAndRecordsItsAllocationInAFreshOne) {
  FakeNode node;
  std::filesystem::create_directories(node.dir().file("run"));
  testing::write_file(node.state_file(), corrupt_text());
  std::string alloc = node.place();
  auto add = node.plugin_add(alloc, "10.200.81.1", 0);
  ASSERT_EQ(add.exit_code, 0) << add.err;
  EXPECT_EQ(json::parse(add.out), FakeNode::prev_result("10.200.81.1"));
  EXPECT_NE(add.err.find("state file corrupt"), std::string::npos) << add.err;
  auto aside = quarantined(node.dir().file("run"));
  ASSERT_EQ(aside.size(), 1u);
  EXPECT_EQ(testing::read_file(aside[0]), corrupt_text());
  auto state = read_state_file(node.state_file());
  ASSERT_TRUE(state.parsed) << state.text;
  EXPECT_EQ(state.allocations.size(), 1u);
  EXPECT_EQ(state.allocations[alloc]["ips"], json::array({"10.200.81.1"}));
}

}  // namespace
}  // namespace cn::reliability
