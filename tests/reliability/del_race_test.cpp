// The plugin's DEL racing the labeler's own work on the same allocation: a notification being
// labeled, a watch update, and a resync whose lists still show the allocation alive (the plugin's
// DEL runs before cilium-cni's, and before the client tells Nomad it stopped).
//
// Expected: once DEL removed an allocation's entry, nothing brings it back: 0 resurrected entries
// over 200 races, also after a resync and a restarted labeler that reread the lists.
#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "tests/reliability/support/fake_node.h"
#include "tests/reliability/support/in_process_labeler.h"
#include "tests/reliability/support/wait.h"

namespace cn::reliability {
namespace {

constexpr int kRaces = 200;
constexpr int kParallel = 4;

std::string ip_of(int i) {
  return "10.201." + std::to_string(i / 250) + "." + std::to_string(i % 250 + 1);
}

std::vector<std::string> resurrected(const FakeNode& node,
                                     const std::vector<std::string>& deleted) {
  std::vector<std::string> back;
  auto view = read_state_file(node.state_file());
  EXPECT_TRUE(view.parsed) << view.error;
  for (const auto& id : deleted) {
    auto it = view.allocations.find(id);
    if (it != view.allocations.end() && !it->contains("deleted_unix_ms")) back.push_back(id);
  }
  return back;
}

TEST(DelRace, DelRacingANotificationAWatchUpdateAndAResync200TimesResurrectsNothing) {
  if (::geteuid() != 0)
    GTEST_SKIP() << "the plugin's notification is accepted from root peers only";
  FakeNode node;
  auto config = InProcessLabeler::config_for(node);
  config.watch = labeler::WatchMode::kNode;  // watch updates race the DEL too
  std::vector<std::string> deleted(kRaces);
  {
    InProcessLabeler labeler(node, config);
    ASSERT_TRUE(labeler.start());

    std::atomic<int> next{0};
    std::atomic<int> failures{0};
    std::atomic<int> resyncs{0};
    // A resync after every finished race, overlapping the next ones: each reads both lists while
    // other DELs are between the plugin and cilium-cni. Paced by the races rather than back to
    // back, so that a loaded machine spends its time on the races.
    std::mutex mu;
    std::condition_variable cv;
    int races_done = 0;
    bool racing = true;
    std::thread resync_loop([&] {
      int seen = 0;
      for (;;) {
        {
          std::unique_lock lock(mu);
          cv.wait(lock, [&] { return races_done > seen || !racing; });
          if (!racing) return;
          seen = races_done;
        }
        (void)labeler.daemon().reconcile_now();
        ++resyncs;
      }
    });
    auto worker = [&] {
      for (int i = next++; i < kRaces; i = next++) {
        const std::string ip = ip_of(i);
        const std::string alloc = node.running_alloc(ip);
        deleted[static_cast<std::size_t>(i)] = alloc;
        // ADD records the entry and notifies; the labeling it starts is in flight when DEL runs.
        auto add = node.plugin_add(alloc, ip, 0);
        if (add.exit_code != 0) ++failures;
        // A watch update: the client reports the allocation again (a task restart, health).
        (void)node.nomad().set_client_status(alloc, "running");
        auto del = node.plugin_del(alloc, ip);
        if (del.exit_code != 0) ++failures;
        (void)labeler.notify_add(alloc, ip, 0);  // a late repeat of the ADD's notification
        {
          std::lock_guard lock(mu);
          ++races_done;
        }
        cv.notify_one();
      }
    };
    std::vector<std::thread> threads;
    for (int t = 0; t < kParallel; ++t) threads.emplace_back(worker);
    for (auto& t : threads) t.join();
    {
      std::lock_guard lock(mu);
      racing = false;
    }
    cv.notify_one();
    resync_loop.join();
    EXPECT_EQ(failures.load(), 0);
    EXPECT_GT(resyncs.load(), 1);
    ASSERT_TRUE(labeler.daemon().queue().wait_idle(std::chrono::seconds{60}));
    EXPECT_EQ(resurrected(node, deleted), std::vector<std::string>{}) << "after the races";

    // A resync whose lists still show every allocation alive (Nomad says running, the agent still
    // has the endpoints) must not rebuild them either.
    ASSERT_TRUE(labeler.daemon().reconcile_now());
    ASSERT_TRUE(labeler.daemon().queue().wait_idle(std::chrono::seconds{60}));
    EXPECT_EQ(resurrected(node, deleted), std::vector<std::string>{}) << "after a resync";
  }
  // A restarted labeler reads the same lists at its startup reconcile.
  InProcessLabeler restarted(node, config);
  ASSERT_TRUE(restarted.start());
  ASSERT_TRUE(restarted.daemon().queue().wait_idle(std::chrono::seconds{60}));
  EXPECT_EQ(resurrected(node, deleted), std::vector<std::string>{}) << "after a restart";
}

}  // namespace
}  // namespace cn::reliability
