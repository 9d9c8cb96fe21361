// A system-job rolling update as Nomad does it on one node: the running labeler gets SIGTERM,
// then the new one starts on the same state file and policy directory (the same host volume).
//
// Expected: the new labeler adopts what the old one did. No endpoint is relabelled (the fake
// agent counts every accepted label write), the state file keeps every allocation's labels, and
// no policy file is rewritten, replaced or removed (same inode, same mtime, same bytes); only
// the policy status report, which a pass always writes, is new.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <filesystem>
#include <map>

#include "tests/reliability/support/background_process.h"
#include "tests/reliability/support/fake_node.h"
#include "tests/reliability/support/wait.h"
#include "tests/support/process.h"
#include "tests/support/sample_policies.h"

namespace cn::reliability {
namespace {

using namespace std::chrono_literals;

struct FileFacts {
  ino_t inode = 0;
  std::int64_t mtime_ns = 0;
  std::string bytes;
  bool operator==(const FileFacts&) const = default;
};

std::map<std::string, FileFacts> files_of(const std::string& dir) {
  std::map<std::string, FileFacts> out;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    struct stat st {};
    if (::stat(entry.path().c_str(), &st) != 0) continue;
    out[entry.path().filename().string()] =
        FileFacts{st.st_ino, st.st_mtim.tv_sec * 1'000'000'000LL + st.st_mtim.tv_nsec,
                  testing::read_file(entry.path().string())};
  }
  return out;
}

TEST(RollingUpdate, TheNewLabelerKeepsEveryLabelAndPolicyFileUntouched) {
  if (::geteuid() != 0) GTEST_SKIP() << "runs the labeler binary, which needs root for its socket";
  FakeNode node;
  const std::string policy_dir = node.dir().file("policies");
  std::filesystem::create_directories(policy_dir);
  ASSERT_TRUE(node.nomad().put_variable("default", "cilium/policies/web",
                                        {{"policy", testing::ccnp_web(8080)}}));
  ASSERT_TRUE(node.nomad().put_variable("default", "cilium/policies/api",
                                        {{"policy", testing::ccnp_web(9090)}}));
  const std::vector<std::string> flags = {"--watch", "node",         "--resync-interval",
                                          "1",       "--policy-dir", policy_dir};
  const std::string status_file = node.dir().file("run/policy-status.json");

  std::vector<std::string> allocs;
  {
    BackgroundProcess old_labeler(node.labeler_argv(flags), node.labeler_env(),
                                  node.dir().file("old.log"));
    ASSERT_TRUE(old_labeler.wait_for_log("ready: node=")) << old_labeler.log();
    for (const char* ip : {"10.200.92.1", "10.200.92.2"}) {
      allocs.push_back(node.running_alloc(ip));
      auto add = node.plugin_add(allocs.back(), ip, 3000);
      EXPECT_NE(add.err.find("labeler=labeled"), std::string::npos) << add.err;
    }
    allocs.push_back(node.running_alloc("10.200.92.3"));  // found by the watch alone
    for (const auto& alloc : allocs) {
      ASSERT_TRUE(node.wait_labeled(alloc, kWebLabels)) << alloc << old_labeler.log();
    }
    ASSERT_TRUE(eventually([&] {
      return std::filesystem::exists(policy_dir + "/nomad-default.web.yaml") &&
             std::filesystem::exists(policy_dir + "/nomad-default.api.yaml");
    })) << old_labeler.log();
    // Every label is in the state file before the stop, as the new labeler will read it.
    ASSERT_TRUE(eventually([&] {
      auto view = read_state_file(node.state_file());
      for (const auto& alloc : allocs) {
        if (!view.allocations.contains(alloc) || !view.allocations[alloc].contains("labeled"))
          return false;
      }
      return true;
    })) << old_labeler.log();
    auto stopped = old_labeler.kill_and_wait(SIGTERM);
    ASSERT_TRUE(stopped.has_value());
    EXPECT_EQ(stopped->exit_code, 0) << old_labeler.log();
    EXPECT_EQ(sanitizer_report(old_labeler.log()), "");
  }

  const auto policies_before = files_of(policy_dir);
  const auto state_before = read_state_file(node.state_file());
  std::map<std::string, int> writes_before;
  for (const auto& alloc : allocs) writes_before[alloc] = node.label_writes(alloc);
  // The new labeler's first policy pass writes a fresh report: its sign of having looked.
  std::filesystem::remove(status_file);

  BackgroundProcess new_labeler(node.labeler_argv(flags), node.labeler_env(),
                                node.dir().file("new.log"));
  ASSERT_TRUE(new_labeler.wait_for_log("ready: node=")) << new_labeler.log();
  ASSERT_TRUE(eventually([&] { return std::filesystem::exists(status_file); }))
      << new_labeler.log();
  // Past the startup reconcile, one periodic reconcile more: it too must find nothing to do.
  const int lists = node.nomad().request_count("node_allocations");
  ASSERT_TRUE(eventually([&] {
    return node.nomad().request_count("node_allocations") >= lists + 2;
  })) << new_labeler.log();
  new_labeler.kill_and_wait(SIGTERM);

  EXPECT_TRUE(files_of(policy_dir) == policies_before) << "a policy file was rewritten or removed\n"
                                                       << new_labeler.log();
  EXPECT_EQ(new_labeler.log().find("policy applied"), std::string::npos) << new_labeler.log();
  EXPECT_EQ(new_labeler.log().find("policy removed"), std::string::npos) << new_labeler.log();
  auto state_after = read_state_file(node.state_file());
  ASSERT_TRUE(state_after.parsed) << state_after.error;
  for (const auto& alloc : allocs) {
    SCOPED_TRACE(alloc);
    EXPECT_EQ(node.label_writes(alloc), writes_before[alloc]) << "the endpoint was relabelled";
    EXPECT_TRUE(node.labeled(alloc, kWebLabels));
    EXPECT_EQ(state_after.allocations[alloc]["labeled"],
              state_before.allocations[alloc]["labeled"]);
  }
  EXPECT_EQ(sanitizer_report(new_labeler.log()), "");
}

}  // namespace
}  // namespace cn::reliability
