// The state directory's filesystem is full (a small tmpfs the test mounts and fills).
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>

#include "tests/reliability/support/in_process_labeler.h"
#include "tests/reliability/support/tmpfs_mount.h"
#include "tests/reliability/support/wait.h"

namespace cn::reliability {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

std::size_t temp_files_in(const std::string& dir) {
  std::size_t n = 0;
  for (const auto& f : std::filesystem::directory_iterator(dir)) {
    n += f.path().filename().string().find(".tmp.") != std::string::npos ? 1 : 0;
  }
  return n;
}

class StateDiskFull : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "mounting a tmpfs needs root";
    disk_ = std::make_unique<TmpfsMount>(node_.dir().file("run"), 256 * 1024);
    if (!disk_->ok()) GTEST_SKIP() << disk_->error();
  }

  FakeNode node_;
  std::unique_ptr<TmpfsMount> disk_;
};

// Expected: with the disk full, ADD still exits 0 and prints prevResult unchanged; stderr has
// one clear line (state write failed, fail-open, the errno text); the existing state file is
// byte for byte what it was, still parses and keeps every earlier allocation; no temp file is
// left behind. Once space is back, the next ADD records normally. Data lost: 0.
TEST_F(StateDiskFull, AddFailsOpenWithAClearLineAndTheExistingStateFileIsUntouched) {
  std::vector<std::string> earlier;
  for (int i = 0; i < 3; ++i) {
    earlier.push_back(node_.place());
    ASSERT_EQ(node_.plugin_add(earlier.back(), "10.200.70." + std::to_string(i + 1), 0).exit_code,
              0);
  }
  const std::string before = testing::read_file(node_.state_file());
  ASSERT_EQ(read_state_file(node_.state_file()).allocations.size(), 3u);
  ASSERT_GT(disk_->fill(), 0u);

  std::string alloc = node_.place();
  auto add = node_.plugin_add(alloc, "10.200.70.9", 0);
  ASSERT_EQ(add.exit_code, 0) << add.err;
  EXPECT_EQ(json::parse(add.out), FakeNode::prev_result("10.200.70.9"));
  EXPECT_NE(add.err.find("state write failed, continuing (fail-open"), std::string::npos)
      << add.err;
  EXPECT_NE(add.err.find("No space left on device"), std::string::npos) << add.err;
  EXPECT_NE(add.err.find("state=failed"), std::string::npos) << add.err;
  EXPECT_EQ(testing::read_file(node_.state_file()), before) << "not a byte changed";
  auto state = read_state_file(node_.state_file());
  ASSERT_TRUE(state.parsed);
  for (const auto& a : earlier) EXPECT_TRUE(state.allocations.contains(a));
  EXPECT_EQ(temp_files_in(node_.dir().file("run")), 0u);

  disk_->unfill();
  ASSERT_EQ(node_.plugin_add(alloc, "10.200.70.9", 0).exit_code, 0);
  state = read_state_file(node_.state_file());
  EXPECT_EQ(state.allocations.size(), 4u) << "recorded once space is back";
}

// Expected: the labeler keeps labeling with the disk full: the waiting plugin hears "labeled",
// the endpoint carries its labels, the failed state write is logged and counted
// (errors_total{kind="state_write"}). Once space is back, the next reconcile records the
// allocation with its endpoint. Data lost: 0.
TEST_F(StateDiskFull, LabelerKeepsLabelingAndTheNextReconcileRecordsOnceSpaceIsBack) {
  InProcessLabeler labeler(node_, InProcessLabeler::config_for(node_));
  ASSERT_TRUE(labeler.start());
  std::string alloc = node_.running_alloc("10.200.71.1");
  // The plugin's record (without its notification, so that labeling starts with the disk full):
  // the labeler only updates entries, so the write it fails at needs one to exist.
  state::StateStore store({node_.state_file()}, system_clock(), nullptr);
  ASSERT_TRUE(store.update_entry(
      alloc,
      [](std::optional<state::StateEntry>& e) {
        e.emplace();
        e->ifname = "eth0";
        e->ips = {"10.200.71.1"};
        return true;
      },
      state::StateStore::Creation::allowed));
  ASSERT_GT(disk_->fill(), 0u);

  auto reply = labeler.notify_add(alloc, "10.200.71.1", 5000);
  ASSERT_TRUE(reply && *reply) << labeler.logs();
  EXPECT_EQ((*reply)->status, notify::ReplyStatus::kLabeled) << (*reply)->message;
  EXPECT_TRUE(node_.labeled(alloc, kWebLabels));
  EXPECT_GE(labeler.daemon().metrics().errors(labeler::ErrorKindLabel::state_write).Value(), 1);
  EXPECT_NE(labeler.logs().find("state write failed: alloc=" + alloc), std::string::npos)
      << labeler.logs();
  EXPECT_EQ(temp_files_in(node_.dir().file("run")), 0u);

  disk_->unfill();
  ASSERT_TRUE(labeler.daemon().reconcile_now());
  auto state = read_state_file(node_.state_file());
  ASSERT_TRUE(state.parsed);
  ASSERT_TRUE(state.allocations.contains(alloc));
  EXPECT_EQ(state.allocations[alloc]["labeled"]["endpoint_id"], (*node_.endpoint_of(alloc))["id"]);
}

}  // namespace
}  // namespace cn::reliability
