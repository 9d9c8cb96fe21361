#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <set>

#include "labeler/daemon/work_queue.h"
#include "tests/support/manual_clock.h"

namespace cn::labeler {
namespace {

WorkItem item(const std::string& id) {
  WorkItem w;
  w.alloc_id = id;
  return w;
}

// Lets a test hold workers inside the handler until it says go.
class Gate {
 public:
  void wait() {
    std::unique_lock lock(mu_);
    ++waiting_;
    cv_.notify_all();
    cv_.wait(lock, [&] { return open_; });
  }
  bool wait_for_waiting(int n) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, std::chrono::seconds{10}, [&] { return waiting_ >= n; });
  }
  void open() {
    std::lock_guard lock(mu_);
    open_ = true;
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int waiting_ = 0;
  bool open_ = false;
};

TEST(WorkQueue, QueuedDuplicatesMergeIntoOneRun) {
  ManualClock clock;
  Gate gate;
  std::mutex mu;
  std::vector<WorkItem> seen;
  WorkQueue q(clock, 1, 100, [&](WorkItem w) {
    if (w.alloc_id == "block") gate.wait();
    std::lock_guard lock(mu);
    seen.push_back(w);
  });
  q.start();
  ASSERT_TRUE(q.enqueue(item("block")));
  ASSERT_TRUE(gate.wait_for_waiting(1));
  auto a1 = item("a");
  a1.ips = {"10.0.0.1"};
  auto a2 = item("a");
  a2.hint.job_id = "web";
  a2.hint.namespace_ = "default";
  a2.hint.group = "app";
  ASSERT_TRUE(q.enqueue(a1));
  ASSERT_TRUE(q.enqueue(a2));
  gate.open();
  ASSERT_TRUE(q.wait_idle(std::chrono::seconds{10}));
  std::lock_guard lock(mu);
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[1].alloc_id, "a");
  EXPECT_EQ(seen[1].ips, std::vector<std::string>{"10.0.0.1"})
      << "merge keeps what the older item knew";
  EXPECT_EQ(seen[1].hint.job_id, "web");
}

TEST(WorkQueue, NeverTwoWorkersOnOneAllocationAndARerunIsNotLost) {
  ManualClock clock;
  Gate gate;
  std::atomic<int> concurrent{0}, max_concurrent{0}, runs{0};
  WorkQueue q(clock, 4, 100, [&](WorkItem) {
    int now = ++concurrent;
    max_concurrent = std::max(max_concurrent.load(), now);
    if (runs++ == 0) gate.wait();
    --concurrent;
  });
  q.start();
  ASSERT_TRUE(q.enqueue(item("a")));
  ASSERT_TRUE(gate.wait_for_waiting(1));
  ASSERT_TRUE(q.enqueue(item("a")));  // arrives while "a" runs
  ASSERT_TRUE(q.enqueue(item("a")));  // merged with the pending rerun
  gate.open();
  ASSERT_TRUE(q.wait_idle(std::chrono::seconds{10}));
  EXPECT_EQ(runs.load(), 2);
  EXPECT_EQ(max_concurrent.load(), 1);
}

TEST(WorkQueue, BoundedQueueRefusesBeyondItsSize) {
  ManualClock clock;
  Gate gate;
  WorkQueue q(clock, 1, 2, [&](WorkItem w) {
    if (w.alloc_id == "block") gate.wait();
  });
  q.start();
  ASSERT_TRUE(q.enqueue(item("block")));
  ASSERT_TRUE(gate.wait_for_waiting(1));
  EXPECT_TRUE(q.enqueue(item("a")));
  EXPECT_TRUE(q.enqueue(item("b")));
  EXPECT_FALSE(q.enqueue(item("c")));
  EXPECT_TRUE(q.enqueue(item("a"))) << "a merge needs no room";
  gate.open();
  ASSERT_TRUE(q.wait_idle(std::chrono::seconds{10}));
}

TEST(WorkQueue, DelayedItemsRunOnlyWhenTheClockReachesThem) {
  ManualClock clock;
  std::atomic<int> runs{0};
  WorkQueue q(clock, 1, 10, [&](WorkItem) { ++runs; });
  q.start();
  ASSERT_TRUE(q.enqueue_after(item("a"), std::chrono::seconds{30}));
  ASSERT_TRUE(clock.wait_for_sleepers(1));
  clock.advance(std::chrono::seconds{29});
  EXPECT_EQ(runs.load(), 0);
  EXPECT_EQ(q.depth(), 1u);
  clock.advance(std::chrono::seconds{1});
  ASSERT_TRUE(q.wait_idle(std::chrono::seconds{10}));
  EXPECT_EQ(runs.load(), 1);
}

}  // namespace
}  // namespace cn::labeler
