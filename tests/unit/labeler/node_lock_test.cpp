// One labeler per node: the lock beside the state file. Each NodeLock opens its own file
// description, so two of them in one process contend exactly as two labelers do.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <future>
#include <stop_token>

#include "labeler/daemon/node_lock.h"
#include "tests/support/manual_clock.h"
#include "tests/support/temp_dir.h"

namespace cn::labeler {
namespace {

using namespace std::chrono_literals;

class NodeLockTest : public ::testing::Test {
 protected:
  std::string lock_path() const { return NodeLock::path_for(dir_.file("state/state.json")); }
  testing::TempDir dir_;
  ManualClock clock_;
};

// Expected: beside the state file, apart from the lock every state access takes.
TEST_F(NodeLockTest, LivesBesideTheStateFile) {
  EXPECT_EQ(NodeLock::path_for("/var/lib/cilium-nomad/state.json"),
            "/var/lib/cilium-nomad/state.json.labeler.lock");
}

// Expected: the first lock creates the directory (root-only) and the file (0600); a second one
// is refused and names the holder's PID.
TEST_F(NodeLockTest, SecondLockIsRefusedAndNamesTheHolder) {
  NodeLock first(lock_path());
  ASSERT_EQ(first.try_lock(), true);
  struct stat st {};
  ASSERT_EQ(::stat(lock_path().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(::stat(dir_.file("state").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);

  NodeLock second(lock_path());
  auto taken = second.try_lock();
  ASSERT_TRUE(taken) << taken.error().message;
  EXPECT_FALSE(*taken);
  EXPECT_EQ(second.holder_pid(), ::getpid());
}

// Expected: destroying the holder releases the lock; the file stays for the next one.
TEST_F(NodeLockTest, ReleasedWhenTheHolderCloses) {
  {
    NodeLock first(lock_path());
    ASSERT_EQ(first.try_lock(), true);
  }
  EXPECT_TRUE(std::filesystem::exists(lock_path()));
  NodeLock second(lock_path());
  EXPECT_EQ(second.try_lock(), true);
}

// Expected: a waiting labeler takes the lock at its next try after the holder lets go.
TEST_F(NodeLockTest, WaiterTakesOverWhenTheHolderStops) {
  auto first = std::make_unique<NodeLock>(lock_path());
  ASSERT_EQ(first->try_lock(), true);
  NodeLock second(lock_path());
  auto outcome = std::async(std::launch::async,
                            [&] { return second.wait(clock_, Deadline{clock_.now() + 30s}); });
  ASSERT_TRUE(clock_.wait_for_sleepers(1));
  first.reset();
  clock_.advance(NodeLock::kRetry);
  ASSERT_EQ(outcome.wait_for(10s), std::future_status::ready);
  EXPECT_EQ(outcome.get(), NodeLock::Outcome::locked);
  NodeLock third(lock_path());
  EXPECT_EQ(third.try_lock(), false);
}

// Expected: a holder that stays past the deadline leaves the waiter with `held`.
TEST_F(NodeLockTest, WaiterGivesUpAtTheDeadline) {
  NodeLock first(lock_path());
  ASSERT_EQ(first.try_lock(), true);
  NodeLock second(lock_path());
  auto outcome = std::async(std::launch::async,
                            [&] { return second.wait(clock_, Deadline{clock_.now() + 1s}); });
  ASSERT_TRUE(clock_.wait_for_sleepers(1));
  clock_.advance(1s);
  ASSERT_EQ(outcome.wait_for(10s), std::future_status::ready);
  EXPECT_EQ(outcome.get(), NodeLock::Outcome::held);
}

// Expected: a stop request ends the wait at once, without the clock moving.
TEST_F(NodeLockTest, StopEndsTheWait) {
  NodeLock first(lock_path());
  ASSERT_EQ(first.try_lock(), true);
  NodeLock second(lock_path());
  std::stop_source stop;
  auto outcome = std::async(std::launch::async, [&] {
    return second.wait(clock_, Deadline{clock_.now() + 30s, stop.get_token()});
  });
  ASSERT_TRUE(clock_.wait_for_sleepers(1));
  stop.request_stop();
  ASSERT_EQ(outcome.wait_for(10s), std::future_status::ready);
  EXPECT_EQ(outcome.get(), NodeLock::Outcome::stopped);
}

// Expected: a symlink in the lock file's place is not followed: the lock fails and names why.
TEST_F(NodeLockTest, SymlinkInItsPlaceIsRefused) {
  std::filesystem::create_directories(dir_.file("state"));
  std::filesystem::create_symlink(dir_.file("elsewhere"), lock_path());
  NodeLock lock(lock_path());
  auto taken = lock.try_lock();
  ASSERT_FALSE(taken);
  EXPECT_EQ(taken.error().message,
            "cannot open " + lock_path() + " (Too many levels of symbolic links)");
  EXPECT_FALSE(std::filesystem::exists(dir_.file("elsewhere")));
}

}  // namespace
}  // namespace cn::labeler
