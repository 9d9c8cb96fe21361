// Stale allocator locks: the operator's watchdog rule, fenced.
#include "labeler/cluster/lock_gc.h"

#include <gtest/gtest.h>

#include "tests/unit/cluster/cluster_test_support.h"

namespace cn::testing {
namespace {

using labeler::cluster::LockGc;
using labeler::cluster::LockGcOptions;
using labeler::cluster::LockGcReport;
using labeler::cluster::PassEnd;

// etcd's concurrency mutex: `<prefix>/<lease in hex>`, empty value, under the session's lease.
std::string lock_key(std::string_view path, etcd::LeaseId lease) {
  char hex[32];
  std::snprintf(hex, sizeof hex, "%llx", static_cast<unsigned long long>(lease));
  return std::string(labeler::cluster::kvstore::kIdentityLockPrefix) + std::string(path) + "/" +
         hex;
}

class LockGcTest : public ClusterTest {
 protected:
  LockGcTest() {
    // Agents' lock sessions: 25 s leases (defaults.LockLeaseTTL) kept alive by their holders.
    holder = must(etcd.grant_lease(std::chrono::seconds{25}, far()), "holder").id;
    waiter = must(etcd.grant_lease(std::chrono::seconds{25}, far()), "waiter").id;
  }
  std::string take(std::string_view path, etcd::LeaseId lease) {
    std::string key = lock_key(path, lease);
    must(etcd.put(key, "", lease, far()), "lock");
    return key;
  }
  // A round every 25 s, as the operator; the sessions keep their leases alive meanwhile.
  LockGcReport round(LockGc& gc) {
    for (int i = 0; i < 5; ++i) {
      clock.advance(std::chrono::seconds{5});
      for (auto lease : {holder, waiter}) (void)etcd.keep_alive(lease, far());
    }
    return gc.run_pass(fence, {});
  }
  etcd::LeaseId holder = 0;
  etcd::LeaseId waiter = 0;
};

TEST_F(LockGcTest, LockHeldUnchangedForARoundIsDeleted) {
  const auto key = take("k8s:app=foo;", holder);
  LockGc gc(etcd, clock, {});
  auto first = round(gc);
  EXPECT_EQ(first.end, PassEnd::complete) << first.detail;
  EXPECT_EQ(first.scanned, 1);
  EXPECT_EQ(first.deleted, 0);
  auto second = round(gc);
  EXPECT_EQ(second.stale, 1);
  EXPECT_EQ(second.deleted, 1);
  EXPECT_EQ(etcd.deleted_by_txn(), std::vector<std::string>{key});
}

TEST_F(LockGcTest, LockReleasedOrRetakenBetweenRoundsIsKept) {
  const auto released = take("k8s:app=foo;", holder);
  const auto retaken = take("id/256", holder);
  LockGc gc(etcd, clock, {});
  round(gc);
  etcd.remove(released);
  etcd.remove(retaken);
  take("id/256", holder);  // the same key again: a new ModRevision
  auto second = round(gc);
  EXPECT_EQ(second.scanned, 1);
  EXPECT_EQ(second.deleted, 0);
  EXPECT_EQ(round(gc).deleted, 1);  // now unchanged for a round
}

TEST_F(LockGcTest, OnlyTheHolderOfAMutexIsStaleNotItsWaiters) {
  const auto held = take("k8s:app=foo;", holder);
  const auto queued = take("k8s:app=foo;", waiter);
  LockGc gc(etcd, clock, {});
  round(gc);
  auto second = round(gc);
  EXPECT_EQ(second.deleted, 1);
  EXPECT_FALSE(exists(held));
  EXPECT_TRUE(exists(queued));
  // The waiter now holds the mutex; if it too stays unchanged for a round, it goes.
  EXPECT_EQ(round(gc).deleted, 1);
  EXPECT_FALSE(exists(queued));
}

TEST_F(LockGcTest, FailedReadDeletesNothingAndKeepsTheMemory) {
  take("k8s:app=foo;", holder);
  take("k8s:app=bar;", holder);
  LockGcOptions options;
  options.scan.page_size = 1;
  LockGc gc(etcd, clock, options);
  round(gc);
  etcd.fail_ranges_after(1, ErrorKind::transport);
  auto cut = round(gc);
  EXPECT_EQ(cut.end, PassEnd::read_failed);
  EXPECT_EQ(etcd.calls(InMemoryEtcd::Method::txn), 0);
  EXPECT_EQ(gc.remembered(), 2U);
  EXPECT_EQ(round(gc).deleted, 2);
}

TEST_F(LockGcTest, DryRunDeletesNothing) {
  take("k8s:app=foo;", holder);
  LockGcOptions options;
  options.dry_run = true;
  LockGc gc(etcd, clock, options);
  round(gc);
  EXPECT_EQ(round(gc).would_delete, 1);
  EXPECT_EQ(round(gc).would_delete, 1);
  EXPECT_EQ(etcd.calls(InMemoryEtcd::Method::txn), 0);
}

TEST_F(LockGcTest, FenceLostStopsTheRound) {
  take("k8s:app=foo;", holder);
  take("k8s:app=bar;", holder);
  LockGc gc(etcd, clock, {});
  round(gc);
  become_leader();  // someone else's leader key now
  auto report = round(gc);
  EXPECT_EQ(report.end, PassEnd::fence_lost);
  EXPECT_EQ(report.deleted, 0);
  EXPECT_EQ(etcd.calls(InMemoryEtcd::Method::txn), 1);
}

TEST_F(LockGcTest, LockWhoseLeaseChangedIsRefusedByEtcd) {
  const auto key = take("k8s:app=foo;", holder);
  LockGc gc(etcd, clock, {});
  round(gc);
  etcd.before_txn([&] { must(etcd.put(key, "", waiter, far()), "re-leased"); });
  auto report = round(gc);
  EXPECT_EQ(report.refused, 1);
  EXPECT_TRUE(exists(key));
}

}  // namespace
}  // namespace cn::testing
